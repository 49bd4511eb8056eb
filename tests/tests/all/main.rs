//! One integration-test binary, a module per topic.

mod coalesce;
mod cuda_types;
mod derive;
mod header;
mod hygiene;
mod layout;
mod lints;
mod padded;
mod report;
mod vector;
