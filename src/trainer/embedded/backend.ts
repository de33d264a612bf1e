// The tensor backend of the embedded trainer: TensorFlow.js on its WebAssembly backend (SIMD,
// single-threaded; 20-50x faster than the pure-JavaScript `cpu` backend on this model's
// matrix products), falling back to `cpu` when the wasm backend cannot start.
//
// Two fixes to the wasm backend, registered here as kernels written in TypeScript over the wasm
// heap (no autograd is hand-written: these are forward kernels that tfjs's own gradients call):
// - Slice, SplitV and Unpack: the stock kernels copy the WHOLE input out of the heap for every
//   slice, so unstacking a [T, B, H] tensor costs O(T^2); these copy only the slice.
// - UnsortedSegmentSum, which the wasm backend lacks and the gradient of `gather` (embedding
//   lookups) needs.
// - GatherV2 along the first axis: a row copy per index instead of an address per element.
// - Identity (every clone, e.g. of each tensor a gradient saves): shared data, not a copy.
import * as tf from "@tensorflow/tfjs";
import "@tensorflow/tfjs-backend-wasm";
import { at, defined, InternalError } from "../../contracts/checked.js";

export type TensorInfo = { dataId: object; shape: number[]; dtype: tf.DataType };
/** The wasm backend's heap access that the kernels written here use. */
export interface WasmBackend {
  makeOutput(shape: number[], dtype: tf.DataType): TensorInfo;
  typedArrayFromHeap(t: TensorInfo): Float32Array | Int32Array | Uint8Array;
}

let ready: Promise<string> | undefined;

/** Starts the backend once: "wasm" when it loads, else "cpu". */
export function initBackend(preferred = process.env.ARL_TINY_BACKEND ?? "wasm"): Promise<string> {
  ready ??= (async () => {
    tf.env().set("PROD", true);
    if (preferred === "wasm") {
      registerWasmKernels();
      try {
        if (await tf.setBackend("wasm")) {
          await tf.ready();
          return "wasm";
        }
      } catch {
        // fall through to cpu
      }
    }
    await tf.setBackend("cpu");
    await tf.ready();
    return "cpu";
  })();
  return ready;
}

function strides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = at(s, i + 1) * at(shape, i + 1);
  return s;
}

/** Copies x[begin : begin + size] (any rank) into a new heap tensor. */
function sliceCopy(backend: WasmBackend, x: TensorInfo, begin: readonly number[], size: readonly number[]): TensorInfo {
  const out = backend.makeOutput([...size], x.dtype);
  const n = size.reduce((a, b) => a * b, 1);
  if (n === 0) return out;
  // Views after makeOutput: allocation may grow (and detach) the heap.
  const dst = backend.typedArrayFromHeap(out);
  const src = backend.typedArrayFromHeap(x);
  const rank = x.shape.length;
  if (begin.length < rank || size.length < rank)
    throw new InternalError(
      `slice of a rank-${rank} tensor with begin [${begin.join(", ")}] and size [${size.join(", ")}]`,
    );
  const xs = strides(x.shape);
  // Innermost run that is contiguous in both: trailing dims taken whole, plus one partial dim.
  let inner = 1;
  let d = rank - 1;
  while (d >= 0 && size[d] === x.shape[d]) inner *= at(size, d--);
  if (d >= 0) inner *= at(size, d--);
  const outer = n / inner;
  // Iterate over the outer dims 0..d.
  const idx = new Array<number>(d + 1).fill(0);
  // Every k below is < rank, the length of begin, size and xs (checked above); idx has d + 1.
  for (let o = 0; o < outer; o++) {
    let off = 0;
    for (let k = 0; k <= d; k++) off += ((begin[k] as number) + (idx[k] as number)) * (xs[k] as number);
    if (d + 1 < rank) off += (begin[d + 1] as number) * (xs[d + 1] as number);
    dst.set(src.subarray(off, off + inner), o * inner);
    for (let k = d; k >= 0; k--) {
      const next = (idx[k] as number) + 1;
      idx[k] = next;
      if (next < (size[k] as number)) break;
      idx[k] = 0;
    }
  }
  return out;
}

/** x[indices] along axis 0: out [...indices.shape, ...x.shape[1:]]. */
function gatherRows(backend: WasmBackend, x: TensorInfo, indices: TensorInfo): TensorInfo {
  const rows = at(x.shape, 0);
  const inner = x.shape.slice(1).reduce((a, b) => a * b, 1);
  const out = backend.makeOutput([...indices.shape, ...x.shape.slice(1)], x.dtype);
  const n = indices.shape.reduce((a, b) => a * b, 1);
  if (n === 0 || inner === 0) return out;
  // Views after makeOutput: allocation may grow (and detach) the heap.
  const dst = backend.typedArrayFromHeap(out);
  const src = backend.typedArrayFromHeap(x);
  const idx = backend.typedArrayFromHeap(indices);
  for (let i = 0; i < n; i++) {
    const r = idx[i] as number;
    // The stock kernel's check, with its message.
    if (!(r >= 0 && r <= rows - 1))
      throw new InternalError(`GatherV2: the index value ${r} is not in [0, ${rows - 1}]`);
    dst.set(src.subarray(r * inner, (r + 1) * inner), i * inner);
  }
  return out;
}

let registered = false;

function registerWasmKernels(): void {
  if (registered) return;
  registered = true;
  const backendName = "wasm";
  const replace = (config: tf.KernelConfig) => {
    if (tf.getKernel(config.kernelName, backendName)) tf.unregisterKernel(config.kernelName, backendName);
    tf.registerKernel(config);
  };
  replace({
    kernelName: "Slice",
    backendName,
    kernelFunc: ({ inputs, attrs, backend }) => {
      const x = inputs.x as unknown as TensorInfo;
      const { begin: b, size: s } = defined(attrs, "Slice's attributes");
      const [begin, size] = tf.slice_util.parseSliceParams(x, b as number[], s as number[]) as [number[], number[]];
      return sliceCopy(backend as unknown as WasmBackend, x, begin, size);
    },
  });
  replace({
    kernelName: "SplitV",
    backendName,
    kernelFunc: ({ inputs, attrs, backend }) => {
      const x = inputs.x as unknown as TensorInfo;
      const { axis: axisAttr, numOrSizeSplits } = defined(attrs, "SplitV's attributes");
      const axis = at(tf.util.parseAxisParam(axisAttr as number, x.shape), 0);
      const sizes = tf.backend_util.prepareSplitSize(x, numOrSizeSplits as number | number[], axis);
      const begin = new Array<number>(x.shape.length).fill(0);
      const size = x.shape.slice();
      return sizes.map((s) => {
        size[axis] = s;
        const out = sliceCopy(backend as unknown as WasmBackend, x, begin, size);
        begin[axis] = at(begin, axis) + s;
        return out;
      });
    },
  });
  replace({
    kernelName: "Unpack",
    backendName,
    kernelFunc: ({ inputs, attrs, backend }) => {
      const x = inputs.value as unknown as TensorInfo;
      let axis = defined(attrs, "Unpack's attributes").axis as number;
      if (axis < 0) axis += x.shape.length;
      const outShape = x.shape.filter((_, i) => i !== axis);
      const begin = new Array<number>(x.shape.length).fill(0);
      const size = x.shape.slice();
      size[axis] = 1;
      const outs: tf.TensorInfo[] = [];
      const n = at(x.shape, axis);
      for (let i = 0; i < n; i++) {
        begin[axis] = i;
        const o = sliceCopy(backend as unknown as WasmBackend, x, begin, size);
        o.shape = outShape.slice();
        outs.push(o);
      }
      return outs;
    },
  });
  // A stock kernel replaced by one that handles some cases itself and hands the rest to it.
  const wrap = (
    kernelName: string,
    kernelFunc: (args: Parameters<tf.KernelFunc>[0], stock: tf.KernelFunc) => ReturnType<tf.KernelFunc>,
  ) => {
    const stock = tf.getKernel(kernelName, backendName);
    if (!stock) return;
    replace({
      kernelName,
      backendName,
      ...(stock.setupFunc ? { setupFunc: stock.setupFunc } : {}),
      kernelFunc: (args) => kernelFunc(args, stock.kernelFunc),
    });
  };
  // The stock kernel is ~12x slower when an operand is transposed (which every matmul gradient
  // asks for): transpose explicitly (a fast kernel), then multiply untransposed.
  const transpose = tf.getKernel("Transpose", backendName);
  if (transpose) {
    const transposeFunc = transpose.kernelFunc;
    wrap("BatchMatMul", (args, original) => {
      const { inputs, backend } = args;
      const attrs = defined(args.attrs, "BatchMatMul's attributes");
      if (!attrs.transposeA && !attrs.transposeB) return original(args);
      const b = backend as unknown as { disposeData(id: object): void };
      const temps: tf.TensorInfo[] = [];
      const flip = (t: tf.TensorInfo): tf.TensorInfo => {
        const rank = t.shape.length;
        const perm = [...Array(rank).keys()];
        [perm[rank - 1], perm[rank - 2]] = [at(perm, rank - 2), at(perm, rank - 1)];
        const out = transposeFunc({ inputs: { x: t }, attrs: { perm }, backend }) as tf.TensorInfo;
        temps.push(out);
        return out;
      };
      const inputA = defined(inputs.a, "BatchMatMul's input a");
      const inputB = defined(inputs.b, "BatchMatMul's input b");
      const a = attrs.transposeA ? flip(inputA) : inputA;
      const bb = attrs.transposeB ? flip(inputB) : inputB;
      const out = original({
        inputs: { a, b: bb },
        attrs: { ...attrs, transposeA: false, transposeB: false },
        backend,
      });
      for (const t of temps) b.disposeData(t.dataId);
      return out;
    });
  }
  // A clone shares the data (as the cpu backend's does): tfjs clones every tensor a gradient
  // saves for the backward pass, and the stock kernel copied each. Kernels never write into
  // their inputs (a variable's assign takes a new buffer), so a shared buffer cannot change.
  replace({
    kernelName: "Identity",
    backendName,
    kernelFunc: ({ inputs, backend }) => {
      const x = inputs.x as unknown as TensorInfo;
      (backend as unknown as { incRef(dataId: object): void }).incRef(x.dataId);
      return { dataId: x.dataId, shape: x.shape.slice(), dtype: x.dtype };
    },
  });
  // Rows of a matrix by index (embedding lookups, the read-out's queries): the stock kernel
  // computes every element's address; rows taken whole are one contiguous copy each.
  wrap("GatherV2", (args, original) => {
    const { inputs, backend } = args;
    const attrs = defined(args.attrs, "GatherV2's attributes");
    const x = inputs.x as unknown as TensorInfo;
    const indices = inputs.indices as unknown as TensorInfo;
    const axis = at(tf.util.parseAxisParam(attrs.axis as number, x.shape), 0);
    if (axis !== 0 || (attrs.batchDims as number) !== 0 || x.shape.length === 0) return original(args);
    return gatherRows(backend as unknown as WasmBackend, x, indices);
  });
  replace({
    kernelName: "UnsortedSegmentSum",
    backendName,
    kernelFunc: ({ inputs, attrs, backend }) => {
      const x = inputs.x as unknown as TensorInfo;
      const ids = inputs.segmentIds as unknown as TensorInfo;
      const numSegments = defined(attrs, "UnsortedSegmentSum's attributes").numSegments as number;
      const b = backend as unknown as WasmBackend;
      const nIds = ids.shape.reduce((a, c) => a * c, 1);
      const inner = nIds === 0 ? 0 : x.shape.reduce((a, c) => a * c, 1) / nIds;
      const outShape = [numSegments, ...x.shape.slice(ids.shape.length)];
      const out = b.makeOutput(outShape, x.dtype);
      const dst = b.typedArrayFromHeap(out);
      dst.fill(0);
      const src = b.typedArrayFromHeap(x);
      const seg = b.typedArrayFromHeap(ids);
      if (seg.length < nIds || src.length < nIds * inner || dst.length < numSegments * inner)
        throw new InternalError("UnsortedSegmentSum: a heap view is shorter than its shape");
      // In range: i < nIds, s < numSegments and k < inner (lengths checked above).
      for (let i = 0; i < nIds; i++) {
        const s = seg[i] as number;
        if (s < 0 || s >= numSegments) continue;
        const so = i * inner;
        const d = s * inner;
        for (let k = 0; k < inner; k++) dst[d + k] = (dst[d + k] as number) + (src[so + k] as number);
      }
      return out;
    },
  });
}

export { tf };
