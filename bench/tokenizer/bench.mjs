// Encodes one corpus with courier (tokenizer_bench, a child process) and with
// @huggingface/tokenizers (in this process), both single-threaded, and prints MB/s for each,
// their ratio, and whether the two produced the same ids. Run through run.sh.
//
// Corpus: the texts of tests/data/cases/tokenizer-cases.json and the licence texts under
// /usr/share/common-licenses, repeated until the target size, each repetition with its
// paragraphs shuffled and its digits shifted (seeded), so that it is natural text but not
// the same few kilobytes over and over.
import { Tokenizer } from "@huggingface/tokenizers";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

function parseArgs(argv) {
  const opts = { sizeMb: 4, runs: 3, tokenizer: "both" };
  for (let i = 2; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--bench") opts.bench = value;
    else if (flag === "--data") opts.data = value;
    else if (flag === "--size-mb") opts.sizeMb = Number(value);
    else if (flag === "--runs") opts.runs = Math.max(1, Number(value));
    else if (flag === "--tokenizer") opts.tokenizer = value;
    else throw new Error(`unknown option ${flag}`);
  }
  if (!opts.bench || !opts.data) throw new Error("--bench and --data are required (use run.sh)");
  return opts;
}

// mulberry32: a small seeded PRNG, so the corpus is the same on every run.
function rng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function buildCorpus(dataDir, sizeBytes) {
  const cases = JSON.parse(fs.readFileSync(path.join(dataDir, "cases/tokenizer-cases.json")));
  const sources = [cases.cases.map((c) => c.text).join("\n")];
  const licences = "/usr/share/common-licenses";
  let numLicences = 0;
  if (fs.existsSync(licences)) {
    for (const name of fs.readdirSync(licences).sort()) {
      const file = path.join(licences, name);
      if (fs.statSync(file).isFile()) {
        sources.push(fs.readFileSync(file, "utf8"));
        ++numLicences;
      }
    }
  }
  const paragraphs = sources.join("\n\n").split(/\n\s*\n/);
  const random = rng(42);
  const parts = [];
  let size = 0;
  for (let rep = 0; size < sizeBytes; ++rep) {
    const order = paragraphs.slice();
    for (let i = order.length - 1; i > 0; --i) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    const text = order.join("\n\n").replace(/[0-9]/g, (d) => String((Number(d) + rep) % 10));
    parts.push(text);
    size += Buffer.byteLength(text) + 2;
  }
  return { text: parts.join("\n\n"), numLicences };
}

function fnv1a(ids) {
  let h = 2166136261;
  for (const id of ids) {
    for (let k = 0; k < 4; ++k) {
      h ^= (id >>> (8 * k)) & 0xff;
      h = Math.imul(h, 16777619) >>> 0;
    }
  }
  return h >>> 0;
}

function median(xs) {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function benchJs(dir, text, runs) {
  const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
  const configPath = path.join(dir, "tokenizer_config.json");
  const config = fs.existsSync(configPath) ? JSON.parse(fs.readFileSync(configPath, "utf8")) : {};
  const tok = new Tokenizer(json, config);
  let ids = tok.encode(text, { add_special_tokens: false }).ids;  // warm-up, like courier's
  const seconds = [];
  for (let r = 0; r < runs; ++r) {
    const t0 = process.hrtime.bigint();
    ids = tok.encode(text, { add_special_tokens: false }).ids;
    seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  const s = median(seconds);
  return { tokens: ids.length, seconds: s, mb_per_s: Buffer.byteLength(text) / s / 1e6,
           ids_fnv1a: fnv1a(ids) };
}

const opts = parseArgs(process.argv);
const { text, numLicences } = buildCorpus(opts.data, opts.sizeMb * 1e6);
const corpusFile = path.join(os.tmpdir(), `courier-tokenizer-corpus-${process.pid}.txt`);
fs.writeFileSync(corpusFile, text);
const bytes = Buffer.byteLength(text);
const tokenizers = {
  qwen3: path.join(opts.data, "models/tiny-qwen3"),
  llama3: path.join(opts.data, "tokenizers/llama3"),
};
const names = opts.tokenizer === "both" ? Object.keys(tokenizers) : [opts.tokenizer];

console.log(`corpus: ${(bytes / 1e6).toFixed(2)} MB (fixture texts + ${numLicences} licence ` +
            `texts, shuffled and varied); single-threaded; median of ${opts.runs} timed runs ` +
            `after one warm-up; node ${process.version}`);
console.log("tokenizer  courier MB/s  @huggingface/tokenizers MB/s   ratio  tokens   same ids");
try {
  for (const name of names) {
    const dir = tokenizers[name];
    if (!dir) throw new Error(`unknown tokenizer ${name}`);
    const courier = JSON.parse(execFileSync(
        opts.bench, [path.join(dir, "tokenizer.json"), corpusFile, String(opts.runs)],
        { encoding: "utf8" }));
    const js = benchJs(dir, text, opts.runs);
    const same = courier.tokens === js.tokens && courier.ids_fnv1a === js.ids_fnv1a;
    console.log(`${name.padEnd(9)}  ${courier.mb_per_s.toFixed(2).padStart(12)}  ` +
                `${js.mb_per_s.toFixed(2).padStart(28)}  ` +
                `${(courier.mb_per_s / js.mb_per_s).toFixed(1).padStart(5)}x  ` +
                `${String(courier.tokens).padStart(7)}  ${same ? "yes" : "NO"}`);
  }
} finally {
  fs.rmSync(corpusFile, { force: true });
}
