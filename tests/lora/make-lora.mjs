#!/usr/bin/env node
// make-lora.mjs: a random PEFT LoRA adapter for a Hugging Face model folder, and the same model
// with that adapter merged into its weights (PEFT's rule W' = W + scale * B A), written as f32.
// An independent reference for courier's LoRA support: base + adapter must equal merged.
// Node 20, no npm packages. See README.md in this folder.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';

const USAGE = `usage: node tests/lora/make-lora.mjs --model DIR --out DIR --seed N --rank R --alpha A
         [--rslora] --targets q_proj,k_proj,... [--adapter-dtype f32|bf16] [--layers 0,1] [--delta 0.3]`;

function fail(msg) {
  process.stderr.write(`make-lora: ${msg}\n`);
  process.exit(1);
}

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const a = { rslora: false, adapterDtype: 'f32', layers: null, delta: 0.3 };
  const valued = new Set(['--model', '--out', '--seed', '--rank', '--alpha', '--targets',
    '--adapter-dtype', '--layers', '--delta']);
  const raw = {};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === '--rslora') { a.rslora = true; continue; }
    if (k === '--help' || k === '-h') { process.stdout.write(USAGE + '\n'); process.exit(0); }
    if (!valued.has(k)) fail(`unknown argument '${k}'\n${USAGE}`);
    if (i + 1 >= argv.length) fail(`${k} needs a value\n${USAGE}`);
    raw[k] = argv[++i];
  }
  for (const k of ['--model', '--out', '--seed', '--rank', '--alpha', '--targets'])
    if (raw[k] === undefined) fail(`${k} is required\n${USAGE}`);
  const int = (k, min) => {
    if (!/^\d+$/.test(raw[k]) || Number(raw[k]) < min) fail(`${k} must be an integer >= ${min}, got '${raw[k]}'`);
    return Number(raw[k]);
  };
  const num = (k) => {
    const v = Number(raw[k]);
    if (raw[k].trim() === '' || !Number.isFinite(v) || v <= 0) fail(`${k} must be a positive number, got '${raw[k]}'`);
    return v;
  };
  a.model = raw['--model'];
  a.out = raw['--out'];
  a.seed = int('--seed', 0);
  if (a.seed > 0xffffffff) fail('--seed must fit in 32 bits');
  a.rank = int('--rank', 1);
  a.alpha = num('--alpha');
  if (raw['--delta'] !== undefined) a.delta = num('--delta');
  a.targets = raw['--targets'].split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (a.targets.length === 0) fail('--targets is empty');
  if (new Set(a.targets).size !== a.targets.length) fail('--targets lists a module twice');
  for (const t of a.targets) {
    if (!/^[A-Za-z0-9_]+$/.test(t)) fail(`--targets: '${t}' is not a module name (like q_proj)`);
    if (/^(lm_head|embed_tokens|embeddings|wte|word_embeddings)$/.test(t))
      fail(`--targets: '${t}' is an embedding or the lm_head; this script never targets those`);
  }
  if (raw['--adapter-dtype'] !== undefined) {
    if (!['f32', 'bf16'].includes(raw['--adapter-dtype'])) fail(`--adapter-dtype must be f32 or bf16`);
    a.adapterDtype = raw['--adapter-dtype'];
  }
  if (raw['--layers'] !== undefined) {
    const parts = raw['--layers'].split(',').map((s) => s.trim());
    if (parts.some((p) => !/^\d+$/.test(p))) fail(`--layers must be a comma list of layer indices, got '${raw['--layers']}'`);
    a.layers = [...new Set(parts.map(Number))].sort((x, y) => x - y);
  }
  return a;
}

// ---------------------------------------------------------------- safetensors

const DTYPE_SIZE = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

function readSafetensors(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 8) fail(`${file}: too short for safetensors`);
  const n = Number(buf.readBigUInt64LE(0));
  if (8 + n > buf.length) fail(`${file}: header length ${n} runs past the end of the file`);
  let header;
  try { header = JSON.parse(buf.toString('utf8', 8, 8 + n)); } catch (e) { fail(`${file}: bad JSON header: ${e.message}`); }
  const dataStart = 8 + n;
  const metadata = header.__metadata__ ?? null;
  const tensors = [];
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [b, e] = info.data_offsets;
    const count = info.shape.reduce((x, y) => x * y, 1);
    const size = DTYPE_SIZE[info.dtype];
    if (size !== undefined && e - b !== count * size) fail(`${file}: ${name}: data_offsets do not match shape and dtype`);
    if (dataStart + e > buf.length) fail(`${file}: ${name}: data runs past the end of the file`);
    tensors.push({ name, dtype: info.dtype, shape: info.shape, bytes: buf.subarray(dataStart + b, dataStart + e) });
  }
  return { metadata, tensors };
}

// tensors: [{name, dtype, shape, bytes: Buffer|Uint8Array}] written in this order.
function writeSafetensors(file, tensors, metadata) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  let off = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [off, off + t.bytes.length] };
    off += t.bytes.length;
  }
  let json = Buffer.from(JSON.stringify(header), 'utf8');
  const pad = (8 - ((8 + json.length) % 8)) % 8;
  if (pad) json = Buffer.concat([json, Buffer.alloc(pad, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, len);
    fs.writeSync(fd, json);
    for (const t of tensors) fs.writeSync(fd, t.bytes);
  } finally {
    fs.closeSync(fd);
  }
}

// An aligned copy of the bytes, widened to f32 (exact for BF16, F16, F32).
function toF32(t) {
  const n = t.shape.reduce((x, y) => x * y, 1);
  const copy = new Uint8Array(t.bytes); // fresh, aligned ArrayBuffer
  if (t.dtype === 'F32') return new Float32Array(copy.buffer, 0, n);
  if (t.dtype === 'BF16') {
    const h = new Uint16Array(copy.buffer, 0, n);
    const out = new Float32Array(n);
    const bits = new Uint32Array(out.buffer);
    for (let i = 0; i < n; i++) bits[i] = h[i] << 16;
    return out;
  }
  if (t.dtype === 'F16') {
    const h = new Uint16Array(copy.buffer, 0, n);
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const x = h[i], s = x & 0x8000 ? -1 : 1, e = (x >> 10) & 0x1f, m = x & 0x3ff;
      out[i] = e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity) : s * (1024 + m) * 2 ** (e - 25);
    }
    return out;
  }
  fail(`${t.name}: dtype ${t.dtype} is not supported for a targeted weight (BF16, F16, F32 are)`);
}

// Round f32 values to bf16 in place (round to nearest even); returns the u16 bits.
function roundToBf16(f32) {
  const bits = new Uint32Array(f32.buffer, f32.byteOffset, f32.length);
  const out = new Uint16Array(f32.length);
  for (let i = 0; i < f32.length; i++) {
    const u = bits[i];
    const r = (u + 0x7fff + ((u >>> 16) & 1)) >>> 16; // no NaN/Inf here: values are finite normals
    out[i] = r;
    bits[i] = r << 16;
  }
  return out;
}

// ---------------------------------------------------------------- random numbers

// mulberry32: a small 32-bit PRNG. Each adapted tensor gets its own stream, seeded from --seed
// and the tensor's name, so a tensor's A and B do not depend on which other tensors are targeted.
function mulberry32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function fnv1a(str, h = 0x811c9dc5) {
  for (let i = 0; i < str.length; i++) h = Math.imul(h ^ str.charCodeAt(i), 0x01000193) >>> 0;
  return h >>> 0;
}

// n samples of N(0, std^2) via Box-Muller, rounded to f32.
function normals(rng, n, std) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const u1 = 1 - rng(); // (0, 1]
    const u2 = rng();
    const r = Math.sqrt(-2 * Math.log(u1)) * std;
    out[i] = r * Math.cos(2 * Math.PI * u2);
    if (i + 1 < n) out[i + 1] = r * Math.sin(2 * Math.PI * u2);
  }
  return out;
}

// ---------------------------------------------------------------- main

function main() {
  const t0 = performance.now();
  const args = parseArgs(process.argv.slice(2));
  if (os.endianness() !== 'LE') fail('this script assumes a little-endian host');

  const modelDir = path.resolve(args.model);
  if (!fs.existsSync(path.join(modelDir, 'config.json'))) fail(`${modelDir}: no config.json (not a Hugging Face model folder)`);
  if (fs.existsSync(path.join(modelDir, 'model.safetensors.index.json')))
    fail(`${modelDir}: sharded checkpoints are not supported by this script`);
  const stFile = path.join(modelDir, 'model.safetensors');
  if (!fs.existsSync(stFile)) fail(`${modelDir}: no model.safetensors`);

  const base = readSafetensors(stFile);
  const R = args.rank;
  const scale = args.rslora ? args.alpha / Math.sqrt(R) : args.alpha / R;

  // Which base tensors are adapted: <prefix>.<module>.weight, 2-D, module in --targets,
  // layer index (the number after "layers.") in --layers when given.
  const hits = new Map(args.targets.map((t) => [t, 0]));
  const hitsAnyLayer = new Map(args.targets.map((t) => [t, 0]));
  const targeted = new Set();
  for (const t of base.tensors) {
    const parts = t.name.split('.');
    if (parts.length < 3 || parts[parts.length - 1] !== 'weight') continue;
    const module = parts[parts.length - 2];
    if (!hits.has(module) || t.shape.length !== 2) continue;
    hitsAnyLayer.set(module, hitsAnyLayer.get(module) + 1);
    if (args.layers) {
      const m = /(?:^|\.)layers\.(\d+)\./.exec(t.name);
      if (!m || !args.layers.includes(Number(m[1]))) continue;
    }
    hits.set(module, hits.get(module) + 1);
    targeted.add(t.name);
  }
  for (const [module, n] of hits) {
    if (n > 0) continue;
    if (hitsAnyLayer.get(module) > 0)
      fail(`target '${module}' matches no 2-D weight in layers ${args.layers.join(',')} of ${stFile}`);
    fail(`target '${module}' matches no 2-D '<prefix>.${module}.weight' tensor in ${stFile}`);
  }

  const adapterTensors = [];
  const mergedTensors = [];
  for (const t of base.tensors) {
    if (!targeted.has(t.name)) { mergedTensors.push(t); continue; }
    const [out, inF] = t.shape;
    const rng = mulberry32((fnv1a(t.name) ^ Math.imul(args.seed, 0x9e3779b1)) >>> 0);
    const A = normals(rng, R * inF, Math.sqrt(1 / inF)); // [R, in]
    const varB = (args.delta * args.delta) / (scale * scale * R);
    const B = normals(rng, out * R, Math.sqrt(varB)); // [out, R]
    let aBytes, bBytes, dtype;
    if (args.adapterDtype === 'bf16') {
      dtype = 'BF16';
      aBytes = new Uint8Array(roundToBf16(A).buffer); // A, B now hold the rounded values
      bBytes = new Uint8Array(roundToBf16(B).buffer);
    } else {
      dtype = 'F32';
      aBytes = new Uint8Array(A.buffer);
      bBytes = new Uint8Array(B.buffer);
    }
    const prefix = t.name.slice(0, -'.weight'.length);
    adapterTensors.push({ name: `base_model.model.${prefix}.lora_A.weight`, dtype, shape: [R, inF], bytes: aBytes });
    adapterTensors.push({ name: `base_model.model.${prefix}.lora_B.weight`, dtype, shape: [out, R], bytes: bBytes });

    // W' = W + scale * (B @ A): the sum in f64, rounded once to f32.
    const W = toF32(t);
    const M = new Float32Array(out * inF);
    const row = new Float64Array(inF);
    for (let i = 0; i < out; i++) {
      row.fill(0);
      for (let k = 0; k < R; k++) {
        const b = B[i * R + k];
        const aOff = k * inF;
        for (let j = 0; j < inF; j++) row[j] += b * A[aOff + j];
      }
      const wOff = i * inF;
      for (let j = 0; j < inF; j++) M[wOff + j] = W[wOff + j] + scale * row[j];
    }
    mergedTensors.push({ name: t.name, dtype: 'F32', shape: [out, inF], bytes: new Uint8Array(M.buffer) });
  }

  const outDir = path.resolve(args.out);
  const adapterDir = path.join(outDir, 'adapter');
  const mergedDir = path.join(outDir, 'merged');
  fs.mkdirSync(adapterDir, { recursive: true });
  fs.mkdirSync(mergedDir, { recursive: true });

  const config = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: path.basename(modelDir),
    r: R,
    lora_alpha: args.alpha,
    use_rslora: args.rslora,
    target_modules: args.targets,
    lora_dropout: 0.0,
    bias: 'none',
    fan_in_fan_out: false,
    modules_to_save: null,
    layers_to_transform: args.layers,
    use_dora: false,
    rank_pattern: {},
    alpha_pattern: {},
    inference_mode: true,
  };
  // PEFT writes lora_dropout as a float (0.0); JSON.stringify would write 0.
  const configText = JSON.stringify(config, null, 2).replace('"lora_dropout": 0,', '"lora_dropout": 0.0,');
  fs.writeFileSync(path.join(adapterDir, 'adapter_config.json'), configText + '\n');
  writeSafetensors(path.join(adapterDir, 'adapter_model.safetensors'), adapterTensors, { format: 'pt' });

  const copied = [];
  for (const f of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json']) {
    const src = path.join(modelDir, f);
    if (fs.existsSync(src)) { fs.copyFileSync(src, path.join(mergedDir, f)); copied.push(f); }
  }
  writeSafetensors(path.join(mergedDir, 'model.safetensors'), mergedTensors, base.metadata);

  const ms = (performance.now() - t0).toFixed(0);
  process.stdout.write(`adapter: ${adapterDir} (adapter_config.json, adapter_model.safetensors, ${args.adapterDtype})\n`);
  process.stdout.write(`merged:  ${mergedDir} (model.safetensors, ${copied.join(', ')})\n`);
  process.stdout.write(`adapted ${targeted.size} tensors (${[...hits].map(([m, n]) => `${m} x${n}`).join(', ')}), ` +
    `r=${R}, alpha=${args.alpha}, ${args.rslora ? 'rslora ' : ''}scale=${scale}, delta=${args.delta}, seed=${args.seed}, ${ms} ms\n`);
}

main();
