//! One integration-test binary, a module per topic.

mod coalesce;
mod derive;
mod layout;
mod padded;
