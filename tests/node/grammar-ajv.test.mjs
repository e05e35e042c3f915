// courier's JSON Schema grammars against an independent validator: for each schema of
// tests/data/schemas, `courier grammar --samples` draws random complete sentences from the
// grammar that constrained decoding would use, and every one must be JSON that ajv (draft
// 2020-12, with ajv-formats) accepts. A grammar that lets through one invalid document fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const bin = process.env.COURIER_BIN;
const dir = fileURLToPath(new URL('../data/schemas/', import.meta.url));
const samples = 150;

for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  test(`grammar samples of ${file} are documents ajv accepts`, () => {
    assert.ok(bin, 'COURIER_BIN must name the courier binary (tests/node/run.sh sets it)');
    const schema = JSON.parse(readFileSync(dir + file, 'utf8'));
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    const out = execFileSync(
      bin,
      ['grammar', '--json-schema', dir + file, '--samples', String(samples), '--seed', '11'],
      { encoding: 'utf8', maxBuffer: 64 << 20 },
    );
    const lines = out.trimEnd().split('\n');
    assert.equal(lines.length, samples);
    for (const line of lines) {
      const text = JSON.parse(line);
      let doc;
      assert.doesNotThrow(() => { doc = JSON.parse(text); }, `not JSON: ${text}`);
      assert.ok(validate(doc), `${JSON.stringify(text)}: ${ajv.errorsText(validate.errors)}`);
    }
  });
}
