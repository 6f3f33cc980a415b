// SPDX-License-Identifier: MIT
// ort-run.js CASE... - the expected outputs of each ONNX test case (a folder
// with model.onnx and test_data_set_0/input_N.pb): the model run by
// onnxruntime's CPU execution provider (npm's onnxruntime-node, which shares
// no code with libnpu), written as test_data_set_0/output_N.pb; and, as
// ONNX defines the ops (no graph optimization at all: its basic level
// already rewrites some graphs, which from 1.30 moves a quantized BERT's
// outputs by steps), as output_N.basic.pb for check.py's int8 comparisons. TensorProto
// is read and written here with the few fields numpy_helper and ONNX's
// test data use (dims, data_type, name, raw_data).
//   ort-run.js --time N CASE...   onnxruntime's median latency only (make bench)
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// ONNX element types and their JavaScript arrays
const TYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 9: ['bool', Uint8Array],
  10: ['float16', Uint16Array],
};

function varint(buf, pos) {
  let v = 0n, shift = 0n, b;
  do {
    b = buf[pos.at++];
    v |= BigInt(b & 0x7f) << shift;
    shift += 7n;
  } while (b & 0x80);
  return v;
}

function readTensor(file) {
  const buf = fs.readFileSync(file), pos = { at: 0 }, t = { dims: [], name: '' };
  while (pos.at < buf.length) {
    const key = Number(varint(buf, pos)), field = key >> 3, wire = key & 7;
    if (wire === 0) {
      const v = varint(buf, pos);
      if (field === 1) t.dims.push(Number(v));
      else if (field === 2) t.type = Number(v);
    } else if (wire === 2) {
      const len = Number(varint(buf, pos)), data = buf.subarray(pos.at, pos.at + len);
      pos.at += len;
      if (field === 1) {            // packed dims
        const p = { at: 0 };
        while (p.at < data.length) t.dims.push(Number(varint(data, p)));
      } else if (field === 8) {
        t.name = data.toString('utf8');
      } else if (field === 9) {
        t.raw = Buffer.from(data);
      }
    } else if (wire === 5) {
      pos.at += 4;
    } else if (wire === 1) {
      pos.at += 8;
    } else {
      throw new Error(`${file}: wire type ${wire}`);
    }
  }
  if (!TYPES[t.type] || !t.raw) throw new Error(`${file}: type ${t.type} without raw_data`);
  const [name, Arr] = TYPES[t.type];
  const bytes = Uint8Array.from(t.raw);
  return { name: t.name, tensor: new ort.Tensor(name, new Arr(bytes.buffer), t.dims) };
}

function putVarint(out, v) {
  v = BigInt(v);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
}

function writeTensor(file, name, tensor) {
  const type = Object.keys(TYPES).find((k) => TYPES[k][0] === tensor.type);
  if (!type) throw new Error(`output ${name}: type ${tensor.type}`);
  const out = [];
  for (const d of tensor.dims) { putVarint(out, 1 << 3); putVarint(out, d); }
  putVarint(out, 2 << 3); putVarint(out, type);
  const nm = Buffer.from(name, 'utf8');
  putVarint(out, (8 << 3) | 2); putVarint(out, nm.length);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  const head = Buffer.from(out), rest = [];
  putVarint(rest, (9 << 3) | 2); putVarint(rest, data.length);
  fs.writeFileSync(file, Buffer.concat([head, nm, Buffer.from(rest), data]));
}

// The session's inputs from DIR/test_data_set_0/input_N.pb, by position.
function readFeeds(sess, dir) {
  const feeds = {};
  sess.inputNames.forEach((name, i) => {
    feeds[name] = readTensor(path.join(dir, 'test_data_set_0', `input_${i}.pb`)).tensor;
  });
  return feeds;
}

// --time N DIR: no outputs written; onnxruntime's median latency over N runs
// (after 3 to warm up) on NPU_BENCH_THREADS threads (2), as one JSON line.
async function timeOnly(n, dir) {
  const threads = Number(process.env.NPU_BENCH_THREADS || 2);
  const sess = await ort.InferenceSession.create(path.join(dir, 'model.onnx'),
    { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
  const feeds = readFeeds(sess, dir);
  const times = [];
  for (let r = 0; r < n + 3; r++) {
    const t0 = process.hrtime.bigint();
    await sess.run(feeds);
    if (r >= 3) times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ model: path.basename(dir), threads, runs: n,
    p50_us: Number(times[(n - 1) >> 1].toFixed(1)) }));
}

async function main() {
  if (process.argv[2] === '--time') {
    const n = Number(process.argv[3]);
    if (!(n >= 1)) throw new Error('--time N: N runs, at least 1');
    for (const dir of process.argv.slice(4)) await timeOnly(n, dir);
    return;
  }
  for (const dir of process.argv.slice(2)) {
    const set = path.join(dir, 'test_data_set_0');
    const sess = await ort.InferenceSession.create(path.join(dir, 'model.onnx'),
      { intraOpNumThreads: 2, graphOptimizationLevel: process.env.ORT_OPT || 'all' });
    const feeds = readFeeds(sess, dir);
    const res = await sess.run(feeds);
    sess.outputNames.forEach((n, i) => writeTensor(path.join(set, `output_${i}.pb`), n, res[n]));
    const basic = await ort.InferenceSession.create(path.join(dir, 'model.onnx'),
      { intraOpNumThreads: 2, graphOptimizationLevel: 'disabled' });
    const rb = await basic.run(feeds);
    basic.outputNames.forEach((n, i) =>
      writeTensor(path.join(set, `output_${i}.basic.pb`), n, rb[n]));
    // onnxruntime's own latency, for the table: the median of 10 runs
    const times = [];
    for (let r = 0; r < 10; r++) {
      const t0 = process.hrtime.bigint();
      await sess.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
    times.sort((a, b) => a - b);
    fs.writeFileSync(path.join(dir, 'ort-latency-us'), `${times[5].toFixed(1)}\n`);
    console.error(`ort-run.js: ${path.basename(dir)}: ${sess.outputNames.length} output(s)`);
  }
}

main().catch((e) => { console.error(`ort-run.js: ${e.message}`); process.exit(1); });
