//! Publish: the edges that leave the machine — the sticky pull-request
//! comment on GitHub, and replay packages for the kernel team.

pub mod github;
pub mod replay;
