/**
 * A document-driven request generator: from the OpenAPI document alone (no knowledge of the
 * service), requests the document calls valid, and requests it calls invalid by exactly one
 * broken rule (a type, a length, a pattern, a format, a range, an enum, a missing or unknown
 * field, both or neither side of a `oneOf`). Strings come from their patterns (randexp), formats
 * from their validators' domain (`openapi_formats.ts`); Ajv, given the same document and formats,
 * confirms each request is what it is said to be, so a bug here cannot pass as the service's.
 * Seeded, so a failing run repeats.
 */
import * as randexp from "randexp";
import { getBase58Decoder } from "@solana/kit";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { OpenApiDocument } from "../../routes/v1/openapi.ts";
import { addFormats } from "./openapi_formats.ts";
import { seededRandom } from "./rpc_fault_proxy.ts";

/** A JSON Schema as the document writes it (`false` for "never present"). */
type Schema = Record<string, unknown> | boolean;

/** One generated request: where it goes, what it carries, and why it is invalid (if it is). */
export interface GeneratedRequest {
  operationId: string;
  method: string;
  path: string;
  body?: unknown;
  /** The broken rule, or null for a request the document calls valid. */
  broken: string | null;
  /** The parameter values before they were written into the URL, for the oracle. */
  params: Record<string, unknown>;
}

interface Parameter {
  name: string;
  in: "path" | "query";
  required: boolean;
  schema: Schema;
}

interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: { "application/json": { schema: Schema } } };
}

const base58 = getBase58Decoder();
// randexp is CommonJS (`module.exports = RandExp`), so the module's default is the class; its
// types declare a default export of the class instead.
const RandExp = randexp.default as unknown as typeof randexp.default.default;

/** Generates requests for every operation of `document`. */
export class RequestGenerator {
  readonly #document: OpenApiDocument;
  readonly #random: () => number;
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true });
  readonly #validators = new Map<string, ValidateFunction>();

  constructor(document: OpenApiDocument, seed: number) {
    this.#document = document;
    this.#random = seededRandom(seed);
    addFormats(this.#ajv);
    this.#ajv.addSchema(document, "doc");
  }

  /** `count` valid requests and every kind of invalid one, for each operation. */
  *requests(validPerOperation: number): Generator<GeneratedRequest> {
    for (const [path, methods] of Object.entries(this.#document.paths)) {
      for (const [method, raw] of Object.entries(methods)) {
        const op = raw as Operation;
        for (let i = 0; i < validPerOperation; i++) yield this.#request(path, method, op, null);
        for (const target of this.#targets(op)) {
          for (const broken of this.#breakages(target.schema, target.at !== "body")) {
            yield this.#request(path, method, op, { ...broken, at: target.at });
          }
        }
      }
    }
  }

  /** Whether Ajv, with the document, calls the request's parts valid. */
  isValid(request: GeneratedRequest): boolean {
    const op = this.#operation(request);
    for (const parameter of op.parameters ?? []) {
      const value = request.params[parameter.name];
      if (value === undefined) {
        if (parameter.required) return false;
        continue;
      }
      if (!this.#validator(parameter.schema)(value)) return false;
    }
    const body = op.requestBody?.content["application/json"].schema;
    return body === undefined || this.#validator(body)(request.body);
  }

  #operation(request: GeneratedRequest): Operation {
    const template = Object.keys(this.#document.paths).find((t) =>
      (this.#document.paths[t]![request.method] as Operation | undefined)?.operationId ===
        request.operationId
    )!;
    return this.#document.paths[template]![request.method] as Operation;
  }

  #validator(schema: Schema): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.#validators.get(key);
    if (!validate) {
      validate = this.#ajv.compile(this.#resolve(schema) as object | boolean as object);
      this.#validators.set(key, validate);
    }
    return validate;
  }

  /** Where a request can be broken: each parameter, and the body. */
  #targets(op: Operation): Array<{ at: string; schema: Schema }> {
    const targets = (op.parameters ?? []).map((p) => ({ at: p.name, schema: p.schema }));
    const body = op.requestBody?.content["application/json"].schema;
    if (body) targets.push({ at: "body", schema: body });
    return targets;
  }

  #request(
    path: string,
    method: string,
    op: Operation,
    broken: { at: string; value: unknown; rule: string } | null,
  ): GeneratedRequest {
    const params: Record<string, unknown> = {};
    for (const parameter of op.parameters ?? []) {
      if (broken?.at === parameter.name) {
        params[parameter.name] = broken.value;
      } else if (parameter.required || this.#random() < 0.5) {
        params[parameter.name] = this.#valid(parameter.schema);
      }
    }
    const bodySchema = op.requestBody?.content["application/json"].schema;
    const body = bodySchema === undefined
      ? undefined
      : broken?.at === "body"
      ? broken.value
      : this.#valid(bodySchema);
    let url = path;
    const query = new URLSearchParams();
    for (const parameter of op.parameters ?? []) {
      const value = params[parameter.name];
      if (value === undefined) continue;
      if (parameter.in === "path") {
        url = url.replace(`{${parameter.name}}`, encodeURIComponent(String(value)));
      } else if (Array.isArray(value)) {
        for (const item of value) query.append(parameter.name, String(item));
      } else query.append(parameter.name, String(value));
    }
    const search = query.toString();
    return {
      operationId: op.operationId,
      method,
      path: search ? `${url}?${search}` : url,
      ...(body === undefined ? {} : { body }),
      broken: broken ? `${broken.at}: ${broken.rule}` : null,
      params,
    };
  }

  // --- Valid values ------------------------------------------------------------------------

  #valid(raw: Schema): unknown {
    const schema = this.#resolve(raw);
    if (typeof schema === "boolean") throw new Error("No value fits the schema false");
    if (schema.oneOf) return this.#valid(this.#pick(schema.oneOf as Schema[]));
    if ("const" in schema) return schema.const;
    if (schema.enum) return this.#pick(schema.enum as unknown[]);
    switch (schema.type) {
      case "string":
        return this.#string(schema);
      case "integer":
        return this.#integer(schema);
      case "array": {
        const min = Number(schema.minItems ?? 0);
        const max = Math.max(min, Math.min(Number(schema.maxItems ?? 5), 5));
        return Array.from(
          { length: this.#int(min, max) },
          () => this.#valid(schema.items as Schema),
        );
      }
      case "object": {
        const properties = (schema.properties ?? {}) as Record<string, Schema>;
        const required = new Set((schema.required ?? []) as string[]);
        const value: Record<string, unknown> = {};
        for (const [name, property] of Object.entries(properties)) {
          if (property === false) continue;
          if (required.has(name) || this.#random() < 0.5) value[name] = this.#valid(property);
        }
        return value;
      }
      default:
        throw new Error(`No generator for ${JSON.stringify(schema)}`);
    }
  }

  #string(schema: Record<string, unknown>): string {
    const min = Number(schema.minLength ?? 0);
    const max = Number(schema.maxLength ?? 64);
    for (let attempt = 0; attempt < 1000; attempt++) {
      const text = schema.format === "solana-address"
        ? this.#base58(32)
        : schema.format === "solana-signature"
        ? this.#base58(64)
        : schema.pattern
        ? this.#fromPattern(String(schema.pattern))
        : this.#text(min, max);
      const length = [...text].length;
      const excluded = ((schema.not as { enum?: string[] } | undefined)?.enum ?? []).includes(text);
      if (length >= min && length <= max && !excluded) return text;
    }
    throw new Error(`No string fits ${JSON.stringify(schema)}`);
  }

  #integer(schema: Record<string, unknown>): number {
    const min = Number(schema.minimum ?? -1000);
    const max = Number(schema.maximum ?? 1000);
    // The edges as often as the middle: where off-by-one refusals live.
    const roll = this.#random();
    if (roll < 0.2) return min;
    if (roll < 0.4) return max;
    return min + Math.floor(this.#random() * (max - min + 1));
  }

  /** Base58 of `bytes` random bytes, some of them leading zeros (written as `1`). */
  #base58(bytes: number): string {
    const value = new Uint8Array(bytes);
    for (let i = 0; i < bytes; i++) value[i] = Math.floor(this.#random() * 256);
    if (this.#random() < 0.1) value.fill(0, 0, this.#int(1, bytes));
    return base58.decode(value);
  }

  #fromPattern(pattern: string): string {
    const generator = new RandExp(pattern);
    generator.max = 12;
    generator.randInt = (from: number, to: number) => this.#int(from, to);
    return generator.gen();
  }

  /** Any text: ASCII, other scripts, emoji, spaces and symbols, but whole characters only. */
  #text(min: number, max: number): string {
    const length = this.#int(Math.max(min, 1), Math.min(max, 40));
    const ranges = [[0x21, 0x7e], [0x20, 0x20], [0xa1, 0x24f], [0x4e00, 0x4fff], [
      0x1f600,
      0x1f64f,
    ]];
    let text = "";
    for (let i = 0; i < length; i++) {
      const [from, to] = this.#pick(ranges)!;
      text += String.fromCodePoint(this.#int(from!, to!));
    }
    return text;
  }

  // --- Broken values -----------------------------------------------------------------------

  /**
   * One value per rule of the schema, each breaking that rule alone where it can. In a parameter
   * every value is sent as text, so a string parameter cannot be given another type.
   */
  /** True when every side of a `oneOf` gives one same property a constant of its own. */
  #discriminated(sides: Schema[]): boolean {
    const constants = sides.map((raw) => {
      const side = this.#resolve(raw);
      if (typeof side === "boolean") return {};
      const properties = (side.properties ?? {}) as Record<string, Schema>;
      return Object.fromEntries(
        Object.entries(properties).flatMap(([name, property]) => {
          const resolved = this.#resolve(property);
          return typeof resolved !== "boolean" && "const" in resolved
            ? [[name, resolved.const]]
            : [];
        }),
      );
    });
    return Object.keys(constants[0] ?? {}).some((name) =>
      new Set(constants.map((c) => c[name])).size === sides.length &&
      constants.every((c) => name in c)
    );
  }

  #breakages(raw: Schema, parameter = false): Array<{ value: unknown; rule: string }> {
    const schema = this.#resolve(raw);
    if (typeof schema === "boolean") return [];
    const out: Array<{ value: unknown; rule: string }> = [];
    const add = (rule: string, value: unknown) => out.push({ rule, value });
    if (schema.oneOf) {
      const sides = (schema.oneOf as Schema[]).map((side) => this.#valid(side));
      // Sides told apart by one property's constant (a zod discriminated union) cannot be met at
      // once: the merged value is simply the last side's.
      if (!this.#discriminated(schema.oneOf as Schema[])) {
        add("oneOf: both sides at once", Object.assign({}, ...sides as object[]));
      }
      add("oneOf: neither side", {});
      (schema.oneOf as Schema[]).forEach((side, i) => {
        for (const broken of this.#breakages(side)) {
          if (broken.rule.startsWith("type:")) continue;
          add(`oneOf[${i}].${broken.rule}`, broken.value);
        }
      });
      return out;
    }
    if (schema.enum) {
      add("enum: another value", "not-a-listed-value");
      return out;
    }
    switch (schema.type) {
      case "string": {
        if (!parameter) add("type: a number", 12);
        const max = schema.maxLength as number | undefined;
        const min = schema.minLength as number | undefined;
        if (max !== undefined) add("maxLength: one too many", this.#longer(schema, max + 1));
        if (min !== undefined && min > 0) add("minLength: one too few", "1".repeat(min - 1));
        if (schema.pattern) {
          for (const text of ["0OIl", "1.", "-1", " ", "1e3", "tx,ping"]) {
            const fits = new RegExp(String(schema.pattern), "u").test(text);
            if (!fits) add(`pattern: ${JSON.stringify(text)}`, text);
          }
        }
        if (schema.format === "solana-address") {
          add("format: 44 base58 characters that are not 32 bytes", "z".repeat(44));
          add("format: 33 zero bytes", "1".repeat(33));
        }
        if (schema.format === "solana-signature") {
          add("format: 88 base58 characters that are not 64 bytes", "z".repeat(88));
        }
        for (const text of (schema.not as { enum?: string[] } | undefined)?.enum ?? []) {
          add(`not: ${JSON.stringify(text)}`, text);
        }
        break;
      }
      case "integer": {
        add("type: a string", "abc");
        add("type: a fraction", 1.5);
        if (schema.minimum !== undefined) add("minimum: one below", Number(schema.minimum) - 1);
        // 2^53 (one above the largest user id) is still exact in a double and in JSON.
        if (schema.maximum !== undefined) add("maximum: one above", Number(schema.maximum) + 1);
        break;
      }
      case "array": {
        add("type: a string", "x");
        if (schema.maxItems !== undefined) {
          const items = schema.items as Schema;
          add(
            "maxItems: one too many",
            Array.from({ length: Number(schema.maxItems) + 1 }, () => this.#valid(items)),
          );
        }
        for (const item of this.#breakages(schema.items as Schema)) {
          if (typeof item.value === "object") continue;
          add(`items: ${item.rule}`, [item.value]);
        }
        break;
      }
      case "object": {
        const valid = this.#valid(schema) as Record<string, unknown>;
        add("type: an array", [valid]);
        for (const name of (schema.required ?? []) as string[]) {
          const { [name]: _, ...rest } = valid;
          add(`required: without ${name}`, rest);
        }
        if (schema.additionalProperties === false) {
          add("additionalProperties: an unknown field", { ...valid, memo: "x" });
        }
        const properties = (schema.properties ?? {}) as Record<string, Schema>;
        for (const [name, property] of Object.entries(properties)) {
          if (property === false) continue;
          for (const broken of this.#breakages(property)) {
            add(`${name}.${broken.rule}`, { ...valid, [name]: broken.value });
          }
        }
        break;
      }
    }
    return out;
  }

  /** A string of `length` characters that matches the schema's pattern where it can. */
  #longer(schema: Record<string, unknown>, length: number): string {
    if (schema.format === "solana-address" || schema.format === "solana-signature") {
      return "z".repeat(length);
    }
    if (schema.pattern && String(schema.pattern).includes("[0-9]")) return "1".repeat(length);
    return "k".repeat(length);
  }

  // --- Helpers -----------------------------------------------------------------------------

  #resolve(schema: Schema): Schema {
    if (typeof schema === "boolean") return schema;
    const ref = schema.$ref as string | undefined;
    if (!ref) return schema;
    const name = ref.replace("#/components/schemas/", "");
    const schemas = (this.#document.components as { schemas: Record<string, Schema> }).schemas;
    return this.#resolve(schemas[name]!);
  }

  #int(from: number, to: number): number {
    return from + Math.floor(this.#random() * (to - from + 1));
  }

  #pick<T>(values: readonly T[]): T {
    return values[Math.floor(this.#random() * values.length)]!;
  }
}
