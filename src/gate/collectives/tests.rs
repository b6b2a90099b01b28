//! The rank-set rules on small hand-made rank sets.

use super::*;
