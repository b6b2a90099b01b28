//! Exact counts of elements, FLOPs and bytes that remember overflow.
//!
//! Fuzzed traces record dimensions near `i64::MAX`; their products wrap a
//! plain integer (to 0 in release builds, silently) or panic in debug
//! builds. Every perf-model formula computes in [`Count`] instead: a `u128`
//! whose arithmetic is checked and whose overflow sticks (like a NaN), so a
//! model either has exact, finite figures or says it has none.

use std::iter::{Product, Sum};
use std::ops::{Add, AddAssign, Mul, MulAssign};

/// A non-negative integer count; `None` inside once any step overflowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Count(Option<u128>);

impl Count {
    /// Zero.
    pub const ZERO: Count = Count(Some(0));
    /// One.
    pub const ONE: Count = Count(Some(1));

    /// The exact value; `None` when a step overflowed.
    pub fn exact(self) -> Option<u128> {
        self.0
    }

    /// The value as a float (always finite: `u128::MAX` < `f64::MAX`);
    /// `None` when a step overflowed.
    pub fn to_f64(self) -> Option<f64> {
        self.0.map(|n| n as f64)
    }
}

macro_rules! from_unsigned {
    ($($t:ty),*) => {$(
        impl From<$t> for Count {
            fn from(n: $t) -> Count {
                Count(Some(u128::from(n)))
            }
        }
    )*};
}
from_unsigned!(u8, u32, u64, u128, bool);

/// `Count ∘ Count`, `Count ∘ u128` (and `u128 ∘ Count`) by a checked
/// `u128` operation; an overflow on either side stays one.
macro_rules! checked {
    ($trait:ident, $method:ident, $assign:ident, $assign_method:ident, $checked:ident) => {
        impl $trait for Count {
            type Output = Count;
            fn $method(self, other: Count) -> Count {
                Count(self.0.zip(other.0).and_then(|(a, b)| a.$checked(b)))
            }
        }

        impl $trait<u128> for Count {
            type Output = Count;
            fn $method(self, other: u128) -> Count {
                self.$method(Count::from(other))
            }
        }

        impl $trait<Count> for u128 {
            type Output = Count;
            fn $method(self, other: Count) -> Count {
                Count::from(self).$method(other)
            }
        }

        impl $assign for Count {
            fn $assign_method(&mut self, other: Count) {
                *self = self.$method(other);
            }
        }
    };
}
checked!(Add, add, AddAssign, add_assign, checked_add);
checked!(Mul, mul, MulAssign, mul_assign, checked_mul);

impl Sum for Count {
    fn sum<I: Iterator<Item = Count>>(iter: I) -> Count {
        iter.fold(Count::ZERO, Add::add)
    }
}

impl Product for Count {
    fn product<I: Iterator<Item = Count>>(iter: I) -> Count {
        iter.fold(Count::ONE, Mul::mul)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_while_it_fits() {
        let n = Count::from(4096u64) * Count::from(4096u64) * 2 + 7;
        assert_eq!(n.exact(), Some(4096 * 4096 * 2 + 7));
        assert_eq!(n.to_f64(), Some((4096 * 4096 * 2 + 7) as f64));
    }

    #[test]
    fn overflow_sticks_instead_of_wrapping_to_zero() {
        let huge = Count::from(i64::MAX as u64);
        // (2^63)^3 overflows u128; a wrapping product of powers of two is 0.
        let product: Count = [huge, huge, huge].into_iter().product();
        assert_eq!(product.exact(), None);
        assert_eq!(
            (product * Count::ZERO + 1).to_f64(),
            None,
            "overflow is not undone"
        );
        let sum: Count = [Count::from(u128::MAX), Count::ONE].into_iter().sum();
        assert_eq!(sum.exact(), None);
    }
}
