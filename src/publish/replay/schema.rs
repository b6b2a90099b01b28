//! The aten schemas tracegate knows: the function schemas (as written in
//! PyTorch's `native_functions.yaml`) of the ops a gate usually flags —
//! GEMMs, convolutions, attention, norms, softmax, elementwise, reductions,
//! copies and indexing.
//!
//! The profiler records every input of a call in schema order (keyword-only
//! arguments and defaults included) but not the overload, nor which inputs
//! are keyword-only. A schema here is "known" for a recorded call when it
//! has as many arguments as the call has inputs and each recorded input
//! type fits its argument (a tensor dtype for `Tensor`, `Scalar` for
//! `int`/`float`/`bool`/`Scalar`, `ScalarList` for `int[]`, `TensorList`
//! for `Tensor[]`, `""` for an optional argument or a `str`/`Device`, which
//! the profiler does not record). The first fitting overload in table order
//! wins. Only the recorded *types* decide, so a finding's op (which has no
//! concrete values) and its full event resolve to the same overload.
//!
//! `replay.py` resolves the overload again at run time against the installed
//! PyTorch's own schemas, so an entry that a PyTorch version spells
//! differently still replays; the table names arguments, splits positional
//! from keyword arguments and supplies defaults the trace did not record.

use std::sync::OnceLock;

use crate::analysis::perf_model::dtype::Dtype;

/// The schemas, `name[.overload](arguments) -> returns`.
const SCHEMAS: &[&str] = &[
    // GEMM
    "mm(Tensor self, Tensor mat2) -> Tensor",
    "mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
    "mm.dtype(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor",
    "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
    "_addmm_activation(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, bool use_gelu=False) -> Tensor",
    "addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "bmm(Tensor self, Tensor mat2) -> Tensor",
    "bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
    "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "baddbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
    "matmul(Tensor self, Tensor other) -> Tensor",
    "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    "_int_mm(Tensor self, Tensor mat2) -> Tensor",
    "_scaled_mm(Tensor self, Tensor mat2, Tensor scale_a, Tensor scale_b, Tensor? bias=None, Tensor? scale_result=None, ScalarType? out_dtype=None, bool use_fast_accum=False) -> Tensor",
    // Convolution
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    "_convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor",
    "conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0, SymInt[1] dilation=1, SymInt groups=1) -> Tensor",
    "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
    "conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] padding=0, SymInt[3] dilation=1, SymInt groups=1) -> Tensor",
    "cudnn_convolution(Tensor self, Tensor weight, SymInt[] padding, SymInt[] stride, SymInt[] dilation, SymInt groups, bool benchmark, bool deterministic, bool allow_tf32) -> Tensor",
    "cudnn_convolution_transpose(Tensor self, Tensor weight, SymInt[] padding, SymInt[] output_padding, SymInt[] stride, SymInt[] dilation, SymInt groups, bool benchmark, bool deterministic, bool allow_tf32) -> Tensor",
    "miopen_convolution(Tensor self, Tensor weight, Tensor? bias, SymInt[] padding, SymInt[] stride, SymInt[] dilation, SymInt groups, bool benchmark, bool deterministic) -> Tensor",
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    // Attention
    "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
    "_scaled_dot_product_flash_attention(Tensor query, Tensor key, Tensor value, float dropout_p=0.0, bool is_causal=False, bool return_debug_mask=False, *, float? scale=None) -> (Tensor, Tensor, Tensor, Tensor, SymInt, SymInt, Tensor, Tensor, Tensor)",
    "_scaled_dot_product_efficient_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_bias, bool compute_log_sumexp, float dropout_p=0.0, bool is_causal=False, *, float? scale=None) -> (Tensor, Tensor, Tensor, Tensor)",
    "_scaled_dot_product_cudnn_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_bias, bool compute_log_sumexp, float dropout_p=0.0, bool is_causal=False, bool return_debug_mask=False, *, float? scale=None) -> (Tensor, Tensor, Tensor, Tensor, SymInt, SymInt, Tensor, Tensor, Tensor)",
    "_flash_attention_forward(Tensor query, Tensor key, Tensor value, Tensor? cum_seq_q, Tensor? cum_seq_k, SymInt max_q, SymInt max_k, float dropout_p, bool is_causal, bool return_debug_mask, *, float? scale=None, SymInt? window_size_left=None, SymInt? window_size_right=None, Tensor? seqused_k=None, Tensor? alibi_slopes=None) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
    "_efficient_attention_forward(Tensor query, Tensor key, Tensor value, Tensor? bias, Tensor? cu_seqlens_q, Tensor? cu_seqlens_k, SymInt? max_seqlen_q, SymInt? max_seqlen_k, float dropout_p, int custom_mask_type, bool compute_log_sumexp=False, *, float? scale=None, Tensor? seqlen_k=None, int? window_size=None) -> (Tensor, Tensor, Tensor, Tensor, SymInt, SymInt)",
    // Normalisation
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    "rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor",
    "_fused_rms_norm(Tensor input, int[] normalized_shape, Tensor? weight, float? eps) -> (Tensor, Tensor)",
    "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)",
    "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor",
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    "_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
    "cudnn_batch_norm(Tensor input, Tensor weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float exponential_average_factor, float epsilon) -> (Tensor, Tensor, Tensor, Tensor)",
    "miopen_batch_norm(Tensor input, Tensor weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float exponential_average_factor, float epsilon) -> (Tensor, Tensor, Tensor)",
    // Softmax
    "_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
    "softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    "_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    "_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
    "log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    "_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
    // Binary elementwise
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
    "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
    "rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "mul.Tensor(Tensor self, Tensor other) -> Tensor",
    "mul.Scalar(Tensor self, Scalar other) -> Tensor",
    "mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "div.Tensor(Tensor self, Tensor other) -> Tensor",
    "div.Scalar(Tensor self, Scalar other) -> Tensor",
    "div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
    "div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
    "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
    "pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
    "maximum(Tensor self, Tensor other) -> Tensor",
    "minimum(Tensor self, Tensor other) -> Tensor",
    "eq.Tensor(Tensor self, Tensor other) -> Tensor",
    "eq.Scalar(Tensor self, Scalar other) -> Tensor",
    "ne.Tensor(Tensor self, Tensor other) -> Tensor",
    "ne.Scalar(Tensor self, Scalar other) -> Tensor",
    "lt.Tensor(Tensor self, Tensor other) -> Tensor",
    "lt.Scalar(Tensor self, Scalar other) -> Tensor",
    "le.Tensor(Tensor self, Tensor other) -> Tensor",
    "le.Scalar(Tensor self, Scalar other) -> Tensor",
    "gt.Tensor(Tensor self, Tensor other) -> Tensor",
    "gt.Scalar(Tensor self, Scalar other) -> Tensor",
    "ge.Tensor(Tensor self, Tensor other) -> Tensor",
    "ge.Scalar(Tensor self, Scalar other) -> Tensor",
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    "where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
    "where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
    "where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor",
    "masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
    "masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
    "masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
    "masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)",
    "addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
    "addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
    "clamp_min(Tensor self, Scalar min) -> Tensor",
    "clamp_max(Tensor self, Scalar max) -> Tensor",
    "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
    "fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)",
    "zero_(Tensor(a!) self) -> Tensor(a!)",
    // Unary elementwise and activations
    "abs(Tensor self) -> Tensor",
    "neg(Tensor self) -> Tensor",
    "exp(Tensor self) -> Tensor",
    "log(Tensor self) -> Tensor",
    "sqrt(Tensor self) -> Tensor",
    "rsqrt(Tensor self) -> Tensor",
    "reciprocal(Tensor self) -> Tensor",
    "sin(Tensor self) -> Tensor",
    "cos(Tensor self) -> Tensor",
    "tanh(Tensor self) -> Tensor",
    "erf(Tensor self) -> Tensor",
    "sigmoid(Tensor self) -> Tensor",
    "relu(Tensor self) -> Tensor",
    "relu_(Tensor(a!) self) -> Tensor(a!)",
    "silu(Tensor self) -> Tensor",
    "silu_(Tensor(a!) self) -> Tensor(a!)",
    "logical_not(Tensor self) -> Tensor",
    "bitwise_not(Tensor self) -> Tensor",
    "gelu(Tensor self, *, str approximate='none') -> Tensor",
    "gelu_(Tensor(a!) self, *, str approximate='none') -> Tensor(a!)",
    "elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor",
    "leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
    "hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
    "softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
    "gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor",
    "silu_backward(Tensor grad_output, Tensor self) -> Tensor",
    "sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
    "tanh_backward(Tensor grad_output, Tensor output) -> Tensor",
    "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
    // Reductions
    "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
    "amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
    "amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
    "max(Tensor self) -> Tensor",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor, Tensor)",
    "argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
    "all(Tensor self) -> Tensor",
    "all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
    "any(Tensor self) -> Tensor",
    "any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
    "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
    "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor, Tensor)",
    // Copies, layout, indexing
    "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    "_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
    "to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    "to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    "to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    "to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
    "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    "cat(Tensor[] tensors, int dim=0) -> Tensor",
    "cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
    "stack(Tensor[] tensors, int dim=0) -> Tensor",
    "index_select(Tensor self, int dim, Tensor index) -> Tensor",
    "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
    "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)",
    "constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
    "upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor",
    "upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor",
    "upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor",
    "_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
    "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    "native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
    "triu(Tensor self, int diagonal=0) -> Tensor",
    "tril(Tensor self, int diagonal=0) -> Tensor",
    "nonzero(Tensor self) -> Tensor",
    "_local_scalar_dense(Tensor self) -> Scalar",
    // Factories
    "arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)",
    "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
];

/// The element kind of a schema argument type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// `Tensor`.
    Tensor,
    /// `Scalar`: a Python number.
    Scalar,
    /// `int` or `SymInt`.
    Int,
    /// `float`.
    Float,
    /// `bool`.
    Bool,
    /// `str`.
    Str,
    /// `ScalarType`: a dtype.
    ScalarType,
    /// `Layout`.
    Layout,
    /// `MemoryFormat`.
    MemoryFormat,
    /// `Device`.
    Device,
    /// `Generator`.
    Generator,
}

/// A schema argument's type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgType {
    /// What one element is.
    pub base: Base,
    /// A list (`int[]`, `SymInt[2]`, `Tensor[]`), with its fixed length when given.
    pub list: Option<Option<usize>>,
    /// `?`: the argument may be None.
    pub optional: bool,
}

/// One argument of a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaArg {
    /// Its name.
    pub name: String,
    /// Its type as written (`SymInt[]`, `Tensor?`, `Tensor(a!)`).
    pub type_text: String,
    /// Its type, parsed.
    pub ty: ArgType,
    /// Its default as written, when it has one.
    pub default: Option<String>,
    /// After the `*`: only by keyword.
    pub kwarg_only: bool,
}

/// A parsed schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    /// The op without namespace or overload (`addmm`).
    pub name: String,
    /// The overload (`default` when the schema names none).
    pub overload: String,
    /// Its arguments in order.
    pub args: Vec<SchemaArg>,
    /// The schema text (namespace-less), as in the table.
    pub text: &'static str,
}

/// The table, parsed once.
pub fn table() -> &'static [Schema] {
    static TABLE: OnceLock<Vec<Schema>> = OnceLock::new();
    TABLE.get_or_init(|| {
        SCHEMAS
            .iter()
            .map(|text| parse(text).unwrap_or_else(|e| panic!("built-in schema {text}: {e}")))
            .collect()
    })
}

/// Parses `name[.overload](args) -> returns`.
fn parse(text: &'static str) -> Result<Schema, String> {
    let open = text.find('(').ok_or("no `(`")?;
    let (qualified, rest) = text.split_at(open);
    let close = matching_paren(rest).ok_or("unbalanced parentheses")?;
    let inner = &rest[1..close];
    let (name, overload) = match qualified.split_once('.') {
        Some((name, overload)) => (name, overload),
        None => (qualified, "default"),
    };
    let mut args = Vec::new();
    let mut kwarg_only = false;
    for piece in split_top_level(inner) {
        let piece = piece.trim();
        if piece.is_empty() {
            continue;
        }
        if piece == "*" {
            kwarg_only = true;
            continue;
        }
        let (declaration, default) = match piece.split_once('=') {
            Some((d, v)) => (d.trim(), Some(v.trim().to_string())),
            None => (piece, None),
        };
        let (type_text, arg_name) = declaration
            .rsplit_once(' ')
            .ok_or_else(|| format!("argument `{piece}` has no name"))?;
        args.push(SchemaArg {
            name: arg_name.to_string(),
            type_text: type_text.to_string(),
            ty: parse_type(type_text)?,
            default,
            kwarg_only,
        });
    }
    Ok(Schema {
        name: name.to_string(),
        overload: overload.to_string(),
        args,
        text,
    })
}

/// The index of the `)` closing the `(` at the start of `text`.
fn matching_paren(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits on commas outside brackets and parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                pieces.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(&text[start..]);
    pieces
}

/// Parses a type such as `Tensor(a!)`, `SymInt[2]`, `int[1]?`, `Tensor?[]`.
fn parse_type(text: &str) -> Result<ArgType, String> {
    let mut rest = text.trim();
    let mut optional = false;
    let mut list = None;
    if let Some(stripped) = rest.strip_suffix('?') {
        optional = true;
        rest = stripped;
    }
    if let Some(stripped) = rest.strip_suffix(']') {
        let open = stripped.rfind('[').ok_or("unbalanced `[`")?;
        let length = &stripped[open + 1..];
        list = Some(if length.is_empty() {
            None
        } else {
            Some(
                length
                    .parse()
                    .map_err(|_| format!("bad list length in {text}"))?,
            )
        });
        rest = &stripped[..open];
    }
    // `Tensor?[]`: a list of optional tensors; the list itself is required.
    let rest = rest.strip_suffix('?').unwrap_or(rest);
    let rest = rest.split('(').next().unwrap_or(rest);
    let base = match rest {
        "Tensor" => Base::Tensor,
        "Scalar" => Base::Scalar,
        "int" | "SymInt" => Base::Int,
        "float" => Base::Float,
        "bool" => Base::Bool,
        "str" => Base::Str,
        "ScalarType" => Base::ScalarType,
        "Layout" => Base::Layout,
        "MemoryFormat" => Base::MemoryFormat,
        "Device" => Base::Device,
        "Generator" => Base::Generator,
        other => return Err(format!("unknown type `{other}`")),
    };
    Ok(ArgType {
        base,
        list,
        optional,
    })
}

/// What the profiler recorded for one input, as far as matching goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// A tensor of this dtype.
    Tensor(Dtype),
    /// `TensorList`.
    TensorList,
    /// `ScalarList`.
    ScalarList,
    /// `GenericList` (2021 traces): a list of anything, values not recorded.
    GenericList,
    /// `Scalar` (or the 2021 `Int`, `Double`, `Bool`).
    Scalar,
    /// `""`: None, or an argument the profiler does not record (str, Device).
    Empty,
    /// A type name tracegate does not know.
    Unknown,
}

impl Recorded {
    /// Classifies an `Input type` entry.
    pub fn of(type_name: &str) -> Recorded {
        match type_name {
            "" => Recorded::Empty,
            "TensorList" => Recorded::TensorList,
            "ScalarList" => Recorded::ScalarList,
            "GenericList" => Recorded::GenericList,
            "Scalar" | "Int" | "Double" | "Bool" => Recorded::Scalar,
            other => match Dtype::parse(other) {
                Some(Dtype::Scalar) | None => Recorded::Unknown,
                Some(dtype) => Recorded::Tensor(dtype),
            },
        }
    }
}

/// Whether a recorded input fits a schema argument.
fn accepts(arg: &SchemaArg, recorded: Recorded) -> bool {
    let ty = &arg.ty;
    match recorded {
        Recorded::Tensor(_) => ty.base == Base::Tensor && ty.list.is_none(),
        Recorded::TensorList => ty.base == Base::Tensor && ty.list.is_some(),
        Recorded::GenericList => ty.list.is_some(),
        Recorded::ScalarList => ty.list.is_some() && ty.base != Base::Tensor,
        Recorded::Scalar => {
            ty.list.is_none()
                && matches!(
                    ty.base,
                    Base::Scalar
                        | Base::Int
                        | Base::Float
                        | Base::Bool
                        | Base::ScalarType
                        | Base::Layout
                        | Base::MemoryFormat
                )
        }
        Recorded::Empty => {
            ty.optional
                || arg.default.is_some()
                || matches!(ty.base, Base::Str | Base::Device | Base::Generator)
                // `Tensor?[] indices` is recorded as "" (its tensors are not).
                || (ty.base == Base::Tensor && ty.list.is_some())
        }
        Recorded::Unknown => false,
    }
}

/// The first schema of `aten::name` whose arguments fit the recorded input
/// types, in table order.
pub fn lookup(name: &str, recorded: &[Recorded]) -> Option<&'static Schema> {
    table().iter().find(|schema| {
        schema.name == name
            && schema.args.len() == recorded.len()
            && schema
                .args
                .iter()
                .zip(recorded)
                .all(|(arg, &rec)| accepts(arg, rec))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(list: &[&str]) -> Vec<Recorded> {
        list.iter().map(|t| Recorded::of(t)).collect()
    }

    #[test]
    fn every_builtin_schema_parses() {
        let table = table();
        assert_eq!(table.len(), SCHEMAS.len());
        let addmm = table.iter().find(|s| s.name == "addmm").expect("addmm");
        assert_eq!(addmm.overload, "default");
        assert_eq!(addmm.args.len(), 5);
        assert!(addmm.args[3].kwarg_only && addmm.args[4].kwarg_only);
        assert!(!addmm.args[2].kwarg_only);
        assert_eq!(addmm.args[3].default.as_deref(), Some("1"));
        let conv = table.iter().find(|s| s.name == "conv2d").expect("conv2d");
        assert_eq!(conv.args[3].ty.list, Some(Some(2)));
        let index = table.iter().find(|s| s.name == "index").expect("index");
        assert_eq!(index.args[1].ty.base, Base::Tensor);
        assert_eq!(index.args[1].ty.list, Some(None));
        assert!(!index.args[1].ty.optional);
        let sum = table
            .iter()
            .find(|s| s.overload == "dim_IntList")
            .expect("sum.dim_IntList");
        assert!(sum.args[1].ty.optional);
        assert_eq!(sum.args[1].ty.list, Some(Some(1)));
    }

    #[test]
    fn overloads_resolve_by_recorded_types() {
        let add = |t: &[&str]| lookup("add", &types(t)).map(|s| s.overload.as_str());
        assert_eq!(
            add(&["c10::BFloat16", "c10::BFloat16", "Scalar"]),
            Some("Tensor")
        );
        assert_eq!(add(&["c10::BFloat16", "double", "Scalar"]), Some("Tensor"));
        assert_eq!(add(&["float", "Scalar", "Scalar"]), Some("Scalar"));
        assert_eq!(add(&["float", "float", "Scalar", "float"]), Some("out"));
        let mm = |t: &[&str]| lookup("mm", &types(t)).map(|s| s.overload.as_str());
        assert_eq!(mm(&["c10::BFloat16", "c10::BFloat16"]), Some("default"));
        assert_eq!(
            mm(&["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]),
            Some("out")
        );
        assert_eq!(
            lookup("where", &types(&["bool", "Scalar", "c10::BFloat16"])).map(|s| &s.overload),
            Some(&"ScalarSelf".to_string())
        );
        assert_eq!(
            lookup(
                "to",
                &types(&["long int", "", "Scalar", "Scalar", "Scalar", ""])
            )
            .map(|s| &s.overload),
            Some(&"device".to_string())
        );
        assert!(lookup("mm", &types(&["c10::BFloat16"])).is_none());
        assert!(lookup("no_such_op", &types(&["float"])).is_none());
        assert!(lookup("gelu", &types(&["c10::BFloat16", ""])).is_some());
        assert!(lookup("cat", &types(&["TensorList", "Scalar"])).is_some());
        assert!(lookup("cat", &types(&["GenericList", "Int"])).is_some());
    }
}
