//! Layout facts of the built-in types.
