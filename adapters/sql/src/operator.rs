//! Repositories of the operator plane.
