//! Element types as the profiler writes them in `Input type`, with their
//! size in memory and the compute spec a kernel on them runs at.

use serde::Serialize;

use super::count::Count;
use crate::analysis::hardware::ComputeSpec;

/// A tensor element type (or the `Scalar` marker of a Python number argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    /// `double`.
    F64,
    /// `float`.
    F32,
    /// `c10::Half`.
    F16,
    /// `c10::BFloat16`.
    Bf16,
    /// `c10::Float8_e4m3fn`.
    F8E4m3fn,
    /// `c10::Float8_e4m3fnuz` (ROCm).
    F8E4m3fnuz,
    /// `c10::Float8_e5m2`.
    F8E5m2,
    /// `c10::Float8_e5m2fnuz` (ROCm).
    F8E5m2fnuz,
    /// `c10::Float8_e8m0fnu` (MX scale factors).
    F8E8m0fnu,
    /// `c10::Float4_e2m1fn_x2`: one byte per element, each holding two fp4 values.
    F4E2m1fnX2,
    /// `long int` / `int64_t`.
    I64,
    /// `int`.
    I32,
    /// `short int`.
    I16,
    /// `signed char`.
    I8,
    /// `unsigned char`.
    U8,
    /// `unsigned short`.
    U16,
    /// `unsigned int`.
    U32,
    /// `unsigned long`.
    U64,
    /// `bool`.
    Bool,
    /// `c10::complex<c10::Half>`.
    C32,
    /// `c10::complex<float>`.
    C64,
    /// `c10::complex<double>`.
    C128,
    /// `Scalar`: a Python number passed by value; counted as 4 bytes.
    Scalar,
}

impl Dtype {
    /// Parses an `Input type` entry (case-insensitive, `c10::` prefix optional).
    /// Non-tensor markers (`ScalarList`, `TensorList`, `""`, …) give `None`.
    pub fn parse(text: &str) -> Option<Dtype> {
        let lower = text.trim().to_ascii_lowercase();
        let name = lower.strip_prefix("c10::").unwrap_or(&lower);
        Some(match name {
            "double" | "float64" | "fp64" => Dtype::F64,
            "float" | "float32" | "fp32" => Dtype::F32,
            "half" | "float16" | "fp16" => Dtype::F16,
            "bfloat16" | "bf16" => Dtype::Bf16,
            "float8_e4m3fn" | "fp8" => Dtype::F8E4m3fn,
            "float8_e4m3fnuz" => Dtype::F8E4m3fnuz,
            "float8_e5m2" => Dtype::F8E5m2,
            "float8_e5m2fnuz" => Dtype::F8E5m2fnuz,
            "float8_e8m0fnu" => Dtype::F8E8m0fnu,
            "float4_e2m1fn_x2" => Dtype::F4E2m1fnX2,
            "long int" | "long" | "int64_t" | "long long" | "long long int" | "int64" => Dtype::I64,
            "int" | "int32_t" | "int32" => Dtype::I32,
            "short int" | "short" | "int16_t" | "int16" => Dtype::I16,
            "signed char" | "int8_t" | "int8" | "qint8" => Dtype::I8,
            "unsigned char" | "uint8_t" | "uint8" | "quint8" => Dtype::U8,
            "unsigned short" | "unsigned short int" | "uint16_t" | "uint16" => Dtype::U16,
            "unsigned int" | "uint32_t" | "uint32" => Dtype::U32,
            "unsigned long" | "unsigned long int" | "uint64_t" | "uint64" => Dtype::U64,
            "bool" => Dtype::Bool,
            "complex<c10::half>" | "complex<half>" => Dtype::C32,
            "complex<float>" => Dtype::C64,
            "complex<double>" => Dtype::C128,
            "qint32" => Dtype::I32,
            "scalar" => Dtype::Scalar,
            _ => return None,
        })
    }

    /// The dtype of a `ScalarType` argument recorded as its enum number
    /// (`out_dtype`, `dtype=` arguments appear in `Concrete Inputs` that way).
    pub fn from_scalar_type_code(code: &str) -> Option<Dtype> {
        Some(match code.trim().parse::<u32>().ok()? {
            0 => Dtype::U8,
            1 => Dtype::I8,
            2 => Dtype::I16,
            3 => Dtype::I32,
            4 => Dtype::I64,
            5 => Dtype::F16,
            6 => Dtype::F32,
            7 => Dtype::F64,
            8 => Dtype::C32,
            9 => Dtype::C64,
            10 => Dtype::C128,
            11 => Dtype::Bool,
            15 => Dtype::Bf16,
            23 => Dtype::F8E5m2,
            24 => Dtype::F8E4m3fn,
            25 => Dtype::F8E5m2fnuz,
            26 => Dtype::F8E4m3fnuz,
            _ => return None,
        })
    }

    /// [`Dtype::bytes`] as a [`Count`], for the models' formulas.
    pub fn size(self) -> Count {
        Count::from(self.bytes())
    }

    /// Bytes one element occupies in memory (a `Float4_e2m1fn_x2` element is
    /// one byte holding two fp4 values; a `Scalar` counts 4).
    pub fn bytes(self) -> u64 {
        match self {
            Dtype::F64 | Dtype::I64 | Dtype::U64 | Dtype::C64 => 8,
            Dtype::F32 | Dtype::I32 | Dtype::U32 | Dtype::C32 | Dtype::Scalar => 4,
            Dtype::F16 | Dtype::Bf16 | Dtype::I16 | Dtype::U16 => 2,
            Dtype::C128 => 16,
            Dtype::F8E4m3fn
            | Dtype::F8E4m3fnuz
            | Dtype::F8E5m2
            | Dtype::F8E5m2fnuz
            | Dtype::F8E8m0fnu
            | Dtype::F4E2m1fnX2
            | Dtype::I8
            | Dtype::U8
            | Dtype::Bool => 1,
        }
    }

    /// Floating-point (real or complex) types.
    pub fn is_floating(self) -> bool {
        !matches!(
            self,
            Dtype::I64
                | Dtype::I32
                | Dtype::I16
                | Dtype::I8
                | Dtype::U8
                | Dtype::U16
                | Dtype::U32
                | Dtype::U64
                | Dtype::Bool
        )
    }

    /// The 8-bit float types.
    pub fn is_fp8(self) -> bool {
        matches!(
            self,
            Dtype::F8E4m3fn
                | Dtype::F8E4m3fnuz
                | Dtype::F8E5m2
                | Dtype::F8E5m2fnuz
                | Dtype::F8E8m0fnu
        )
    }

    /// The compute spec of matrix-core work (GEMM, convolution, attention)
    /// on operands of this type, where one exists.
    pub fn matrix_spec(self) -> Option<ComputeSpec> {
        Some(match self {
            Dtype::F64 => ComputeSpec::MatrixFp64,
            Dtype::F32 => ComputeSpec::MatrixFp32,
            Dtype::F16 => ComputeSpec::MatrixFp16,
            Dtype::Bf16 => ComputeSpec::MatrixBf16,
            Dtype::F4E2m1fnX2 => ComputeSpec::MatrixFp4,
            Dtype::I8 | Dtype::U8 => ComputeSpec::MatrixInt8,
            d if d.is_fp8() => ComputeSpec::MatrixFp8,
            _ => return None,
        })
    }

    /// The compute spec of vector-unit work (elementwise, reductions,
    /// normalisation) on this type, where one exists.
    pub fn vector_spec(self) -> Option<ComputeSpec> {
        Some(match self {
            Dtype::F64 => ComputeSpec::VectorFp64,
            Dtype::F32 => ComputeSpec::VectorFp32,
            Dtype::F16 => ComputeSpec::VectorFp16,
            Dtype::Bf16 => ComputeSpec::VectorBf16,
            _ => return None,
        })
    }

    /// A rank for type promotion among floats (wider first) and among ints.
    fn promotion_rank(self) -> u8 {
        match self {
            Dtype::C128 => 40,
            Dtype::C64 => 39,
            Dtype::C32 => 38,
            Dtype::F64 => 30,
            Dtype::F32 => 29,
            Dtype::F16 | Dtype::Bf16 => 28,
            d if d.is_fp8() || d == Dtype::F4E2m1fnX2 => 27,
            Dtype::I64 | Dtype::U64 => 20,
            Dtype::I32 | Dtype::U32 => 19,
            Dtype::I16 | Dtype::U16 => 18,
            Dtype::I8 | Dtype::U8 => 17,
            Dtype::Bool => 10,
            _ => 0,
        }
    }

    /// PyTorch's result type of a binary op on two tensors with dimensions
    /// (both "dimensioned"): the wider of two floats, bf16 with fp16 giving
    /// fp32, a float over an int, the wider of two ints.
    pub fn promote(a: Dtype, b: Dtype) -> Dtype {
        if a == b {
            return a;
        }
        if matches!(
            (a, b),
            (Dtype::F16, Dtype::Bf16) | (Dtype::Bf16, Dtype::F16)
        ) {
            return Dtype::F32;
        }
        if a.promotion_rank() >= b.promotion_rank() {
            a
        } else {
            b
        }
    }

    /// The result type of a tensor combined with a dimensionless operand (a
    /// Python number or a 0-dim tensor): the tensor's type, unless the tensor
    /// is integral/bool and the other operand is floating (then the default
    /// float type, fp32).
    pub fn promote_with_scalar(tensor: Dtype, scalar: Dtype) -> Dtype {
        // `Scalar` does not say whether the number is integral: keep the tensor's type.
        if scalar == Dtype::Scalar || tensor.is_floating() {
            return tensor;
        }
        if scalar.is_floating() {
            Dtype::F32
        } else if tensor == Dtype::Bool && scalar != Dtype::Bool {
            Dtype::I64
        } else {
            tensor
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_profiler_type_names() {
        assert_eq!(Dtype::parse("c10::BFloat16"), Some(Dtype::Bf16));
        assert_eq!(Dtype::parse("float"), Some(Dtype::F32));
        assert_eq!(Dtype::parse("c10::Half"), Some(Dtype::F16));
        assert_eq!(Dtype::parse("c10::Float8_e4m3fn"), Some(Dtype::F8E4m3fn));
        assert_eq!(
            Dtype::parse("c10::Float8_e5m2fnuz"),
            Some(Dtype::F8E5m2fnuz)
        );
        assert_eq!(Dtype::parse("long int"), Some(Dtype::I64));
        assert_eq!(Dtype::parse("bool"), Some(Dtype::Bool));
        assert_eq!(Dtype::parse("Scalar"), Some(Dtype::Scalar));
        assert_eq!(Dtype::parse("ScalarList"), None);
        assert_eq!(Dtype::parse(""), None);
    }

    /// Every spelling `Input type` uses, with the width of the C type it names.
    #[test]
    fn every_type_name_the_profiler_writes_has_its_width() {
        for (name, dtype, bytes) in [
            ("double", Dtype::F64, 8),
            ("c10::Float8_e4m3fnuz", Dtype::F8E4m3fnuz, 1),
            ("c10::Float8_e5m2", Dtype::F8E5m2, 1),
            ("c10::Float8_e8m0fnu", Dtype::F8E8m0fnu, 1),
            ("int", Dtype::I32, 4),
            ("short int", Dtype::I16, 2),
            ("signed char", Dtype::I8, 1),
            ("unsigned char", Dtype::U8, 1),
            ("unsigned short", Dtype::U16, 2),
            ("unsigned int", Dtype::U32, 4),
            ("unsigned long", Dtype::U64, 8),
            ("c10::complex<c10::Half>", Dtype::C32, 4),
            ("c10::complex<float>", Dtype::C64, 8),
            ("c10::complex<double>", Dtype::C128, 16),
            ("c10::qint32", Dtype::I32, 4),
        ] {
            assert_eq!(Dtype::parse(name), Some(dtype), "{name}");
            assert_eq!(dtype.bytes(), bytes, "{name}");
        }
    }

    #[test]
    fn bytes_per_element() {
        assert_eq!(Dtype::F64.bytes(), 8);
        assert_eq!(Dtype::I64.bytes(), 8);
        assert_eq!(Dtype::F32.bytes(), 4);
        assert_eq!(Dtype::Scalar.bytes(), 4);
        assert_eq!(Dtype::Bf16.bytes(), 2);
        assert_eq!(Dtype::F8E4m3fnuz.bytes(), 1);
        assert_eq!(Dtype::Bool.bytes(), 1);
        // Two fp4 values per byte: a (4, 8)-shaped x2 tensor holds 64 fp4 values in 32 bytes.
        assert_eq!(Dtype::F4E2m1fnX2.bytes(), 1);
        assert_eq!(
            Dtype::parse("c10::Float4_e2m1fn_x2"),
            Some(Dtype::F4E2m1fnX2)
        );
    }

    #[test]
    fn promotion() {
        assert_eq!(Dtype::promote(Dtype::Bf16, Dtype::F32), Dtype::F32);
        assert_eq!(Dtype::promote(Dtype::Bf16, Dtype::F16), Dtype::F32);
        assert_eq!(Dtype::promote(Dtype::I64, Dtype::Bf16), Dtype::Bf16);
        // The 8- and 4-bit floats are floats too: over any int.
        assert_eq!(Dtype::promote(Dtype::I64, Dtype::F8E4m3fn), Dtype::F8E4m3fn);
        assert_eq!(
            Dtype::promote(Dtype::F4E2m1fnX2, Dtype::I8),
            Dtype::F4E2m1fnX2
        );
        // (tensor, scalar, result). An integral tensor keeps its width
        // against an integral number (torch: int32 tensor + 1 is int32);
        // only bool widens, to int64.
        for (tensor, scalar, result) in [
            (Dtype::Bf16, Dtype::F64, Dtype::Bf16),
            (Dtype::I64, Dtype::F64, Dtype::F32),
            (Dtype::I64, Dtype::I64, Dtype::I64),
            (Dtype::I32, Dtype::I64, Dtype::I32),
            (Dtype::Bool, Dtype::I64, Dtype::I64),
            (Dtype::Bool, Dtype::Bool, Dtype::Bool),
        ] {
            assert_eq!(
                Dtype::promote_with_scalar(tensor, scalar),
                result,
                "{tensor:?} with a {scalar:?} number"
            );
        }
    }

    /// Each step up the ladder wins over every step below it, both ways round.
    #[test]
    fn promotion_climbs_from_bool_through_ints_and_floats_to_complex() {
        use Dtype::*;
        // A `Scalar` (its type unknown) ranks below every tensor type.
        let ladder = [
            [Scalar, Scalar],
            [Bool, Bool],
            [I8, U8],
            [I16, U16],
            [I32, U32],
            [I64, U64],
            [F8E5m2, F4E2m1fnX2],
            [F16, Bf16],
            [F32, F32],
            [F64, F64],
            [C32, C32],
            [C64, C64],
            [C128, C128],
        ];
        for (i, lower) in ladder.iter().enumerate() {
            for higher in &ladder[i + 1..] {
                for (&low, &high) in lower.iter().zip(higher) {
                    assert_eq!(Dtype::promote(low, high), high, "{low:?} with {high:?}");
                    assert_eq!(Dtype::promote(high, low), high, "{high:?} with {low:?}");
                }
            }
        }
    }

    #[test]
    fn every_dtype_has_its_matrix_and_vector_spec() {
        use ComputeSpec::*;
        for (dtype, matrix, vector) in [
            (Dtype::F64, Some(MatrixFp64), Some(VectorFp64)),
            (Dtype::F32, Some(MatrixFp32), Some(VectorFp32)),
            (Dtype::F16, Some(MatrixFp16), Some(VectorFp16)),
            (Dtype::Bf16, Some(MatrixBf16), Some(VectorBf16)),
            (Dtype::F4E2m1fnX2, Some(MatrixFp4), None),
            (Dtype::I8, Some(MatrixInt8), None),
            (Dtype::U8, Some(MatrixInt8), None),
            (Dtype::F8E4m3fnuz, Some(MatrixFp8), None),
            (Dtype::F8E5m2, Some(MatrixFp8), None),
            (Dtype::I32, None, None),
            (Dtype::C64, None, None),
        ] {
            assert_eq!(dtype.matrix_spec(), matrix, "{dtype:?}");
            assert_eq!(dtype.vector_spec(), vector, "{dtype:?}");
        }
    }

    #[test]
    fn compute_specs() {
        assert_eq!(Dtype::Bf16.matrix_spec(), Some(ComputeSpec::MatrixBf16));
        assert_eq!(Dtype::F8E4m3fn.matrix_spec(), Some(ComputeSpec::MatrixFp8));
        assert_eq!(Dtype::F32.vector_spec(), Some(ComputeSpec::VectorFp32));
        assert_eq!(Dtype::I64.vector_spec(), None);
    }

    /// Each `ScalarType` code and the name the profiler writes for a tensor
    /// of that type (`Input type`) are the same dtype.
    #[test]
    fn every_scalar_type_code_has_its_profiler_name() {
        let names = [
            ("0", "unsigned char"),
            ("1", "signed char"),
            ("2", "short int"),
            ("3", "int"),
            ("4", "long int"),
            ("5", "c10::Half"),
            ("6", "float"),
            ("7", "double"),
            ("8", "c10::complex<c10::Half>"),
            ("9", "c10::complex<float>"),
            ("10", "c10::complex<double>"),
            ("11", "bool"),
            ("15", "c10::BFloat16"),
            ("23", "c10::Float8_e5m2"),
            ("24", "c10::Float8_e4m3fn"),
            ("25", "c10::Float8_e5m2fnuz"),
            ("26", "c10::Float8_e4m3fnuz"),
        ];
        for (code, name) in names {
            let dtype = Dtype::from_scalar_type_code(code);
            assert!(dtype.is_some(), "{code}");
            assert_eq!(Dtype::parse(name), dtype, "{code}: {name}");
        }
    }

    #[test]
    fn scalar_type_codes() {
        assert_eq!(Dtype::from_scalar_type_code("15"), Some(Dtype::Bf16));
        assert_eq!(Dtype::from_scalar_type_code("6"), Some(Dtype::F32));
        assert_eq!(Dtype::from_scalar_type_code(""), None);
    }
}
