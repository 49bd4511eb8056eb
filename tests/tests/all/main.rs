//! One integration-test binary, a module per topic.

mod layout;
