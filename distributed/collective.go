package distributed

import (
	"regexp"
	"strings"
)

// IsCommKernel reports whether a kernel name is a communication kernel:
// NCCL's ncclDevKernel_* / ncclDevKernel_Generic, legacy ncclKernel_*,
// RCCL's rccl* (all case-insensitive), or a name matching extra (the
// user's pattern for custom communication kernels; may be nil).
func IsCommKernel(name string, extra *regexp.Regexp) bool {
	if len(name) >= 4 {
		p := strings.ToLower(name[:4])
		if p == "nccl" || p == "rccl" {
			return true
		}
	}
	return extra != nil && extra.MatchString(name)
}

// Collective kinds, as the user says them. NCCL's bus-bandwidth factor
// depends on the kind.
const (
	AllReduce     = "all_reduce"
	AllGather     = "all_gather"
	ReduceScatter = "reduce_scatter"
	AllToAll      = "all_to_all"
	Broadcast     = "broadcast"
	Reduce        = "reduce"
	SendRecv      = "send_recv"
	Barrier       = "barrier"
	UnknownKind   = "unknown"
)

// CollectiveKind names the collective from the profiler's "Collective name"
// argument when present, else from the kernel name
// ("ncclDevKernel_AllReduce_Sum_f32_RING_LL" → all_reduce).
func CollectiveKind(collectiveArg, kernel string) string {
	for _, s := range []string{collectiveArg, kernel} {
		k := strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
		switch {
		case k == "":
			continue
		case strings.Contains(k, "allreduce"):
			return AllReduce
		case strings.Contains(k, "allgather"):
			return AllGather
		case strings.Contains(k, "reducescatter"):
			return ReduceScatter
		case strings.Contains(k, "alltoall"):
			return AllToAll
		case strings.Contains(k, "broadcast") || strings.Contains(k, "bcast"):
			return Broadcast
		case strings.Contains(k, "sendrecv") || strings.Contains(k, "send") || strings.Contains(k, "recv"):
			return SendRecv
		case strings.Contains(k, "barrier"):
			return Barrier
		case strings.Contains(k, "reduce"):
			return Reduce
		}
	}
	return UnknownKind
}

// BusFactor is NCCL's factor from algorithm bandwidth to bus bandwidth for
// a collective over n ranks (nccl-tests' PERFORMANCE.md): 2(n−1)/n for
// all-reduce, (n−1)/n for all-gather, reduce-scatter and all-to-all, 1 for
// the rest.
func BusFactor(kind string, n int) float64 {
	if n < 1 {
		return 1
	}
	f := float64(n-1) / float64(n)
	switch kind {
	case AllReduce:
		return 2 * f
	case AllGather, ReduceScatter, AllToAll:
		return f
	}
	return 1
}

// DTypeBytes is the size of one element of a profiler dtype name ("Float",
// "BFloat16", "Half", "Long", ...), or 0 when unknown.
func DTypeBytes(dtype string) int64 {
	switch strings.ToLower(dtype) {
	case "float", "float32", "f32", "int", "int32", "uint32":
		return 4
	case "double", "float64", "long", "int64", "uint64", "complexfloat":
		return 8
	case "half", "float16", "bfloat16", "bf16", "f16", "short", "int16", "uint16":
		return 2
	case "byte", "char", "bool", "int8", "uint8", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz":
		return 1
	case "complexdouble":
		return 16
	}
	return 0
}

// dtypeFromKernel reads the element type NCCL puts in reduction kernel
// names ("..._Sum_f32_..."), for kernels without arguments.
func dtypeFromKernel(name string) string {
	for _, t := range []string{"_f32", "_f16", "_bf16", "_f64", "_i32", "_u32", "_i64", "_u64", "_i8", "_u8", "_f8e4m3", "_f8e5m2"} {
		if strings.Contains(name, t+"_") || strings.Contains(name, t+"(") || strings.HasSuffix(name, t) {
			return map[string]string{"_f32": "Float", "_f16": "Half", "_bf16": "BFloat16", "_f64": "Double", "_i32": "Int", "_u32": "uint32", "_i64": "Long", "_u64": "uint64", "_i8": "int8", "_u8": "Byte", "_f8e4m3": "float8_e4m3fn", "_f8e5m2": "float8_e5m2"}[t]
		}
	}
	return ""
}

// Dimension names the parallelism dimension of a process group from its
// description ("mesh_dp", "mesh_tp", "default_pg", ...): dp, tp, pp, cp,
// ep, fsdp or the description itself; "default" for the default group.
func Dimension(desc, name string) string {
	d := strings.ToLower(desc)
	if d == "" {
		if name == "" || name == "0" {
			return "default"
		}
		return "pg " + name
	}
	if d == "default_pg" {
		return "default"
	}
	// A word of the description names the dimension: "mesh_dp",
	// "dp_replicate", "tp:0".
	words := strings.FieldsFunc(d, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
	for _, dim := range []string{"fsdp", "hsdp", "dp", "tp", "pp", "cp", "ep", "sp"} {
		for _, w := range words {
			if w == dim {
				return dim
			}
		}
	}
	return desc
}
