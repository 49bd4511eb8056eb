//! One integration-test binary, a module per topic.

mod coalesce;
mod derive;
mod hygiene;
mod layout;
mod lints;
mod padded;
mod vector;
