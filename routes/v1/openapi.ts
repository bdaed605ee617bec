/**
 * The OpenAPI 3.1 document of the game API, built from the route table (`operations.ts`): the zod
 * schemas the routes validate with (bodies and queries) and the answer schemas (`answers.ts`),
 * through zod's own JSON Schema output (draft 2020-12, the dialect OpenAPI 3.1 uses). Routes stay
 * plain Hono routes. Every `/v1` answer the test suite receives is validated against this
 * document (`tests/support/openapi_conformance.ts`), so an undescribed field or error code fails
 * the test that provoked it.
 */
import { z } from "zod";
import { ERROR_CODES, type ErrorCode, V1_COMMON_ERRORS, V1_FEED_ERRORS } from "./error_codes.ts";
import { ANSWERS, BODIES, type Operation, TAGS, V1_OPERATIONS } from "./operations.ts";
import { EXAMPLES } from "./examples.ts";

/** The OpenAPI document as JSON. */
export type OpenApiDocument = Record<string, unknown> & {
  paths: Record<string, Record<string, unknown>>;
};

/** Builds the document; `serverUrl` is the service's public origin. */
export function buildOpenApiDocument(
  options: { serverUrl: string; title: string },
): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const op of V1_OPERATIONS) {
    const path = paths[op.path] ??= {};
    path[op.method] = operationObject(op);
  }
  const schemas: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(ANSWERS)) {
    schemas[name] = jsonSchema(schema, "output");
  }
  for (const [name, schema] of Object.entries(BODIES)) schemas[name] = jsonSchema(schema, "input");
  return {
    openapi: "3.1.0",
    info: {
      title: `${options.title} game API`,
      version: "1",
      description: "Game servers call `/v1` with a project API key in `x-api-key`. Errors are " +
        "`{ error: { code, message } }`: branch on `code`, the message may change. Every keyed " +
        "request counts toward the quotas (600 a minute, 100,000 a UTC day), whatever its " +
        "answer, except reads of the event feed, which have a limit of their own. A key has " +
        "scopes: `read` for every route but the transaction routes, which need `pay` (each " +
        "operation's `security` names its scope); a key without it gets 403 " +
        "`insufficient_scope`, after the request was counted.",
    },
    servers: [{ url: options.serverUrl }],
    security: [{ apiKey: ["read"] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "x-api-key",
          description: "A project API key, created in the dashboard with the scopes `read` " +
            "and/or `pay` (keys made before scopes have both)",
        },
      },
    },
  };
}

function operationObject(op: Operation): Record<string, unknown> {
  const example = EXAMPLES[op.id];
  const parameters: unknown[] = [];
  for (const [name, schema] of Object.entries(op.pathParams ?? {})) {
    const { description, ...rest } = jsonSchema(schema, "input");
    parameters.push({
      name,
      in: "path",
      required: true,
      description,
      schema: rest,
      ...exampleOf(example?.params?.[name]),
    });
  }
  if (op.query) {
    const query = jsonSchema(op.query, "input") as {
      properties: Record<string, Record<string, unknown>>;
      required?: string[];
    };
    for (const [name, { description, ...schema }] of Object.entries(query.properties)) {
      parameters.push({
        name,
        in: "query",
        required: query.required?.includes(name) ?? false,
        ...(description ? { description } : {}),
        // A list is sent as repeated parameters (`types=tx&types=watch`); commas work too.
        ...(schema.type === "array" ? { style: "form", explode: true } : {}),
        schema,
        ...exampleOf(example?.params?.[name]),
      });
    }
  }
  const common = op.limit === "feed_reads" ? V1_FEED_ERRORS : V1_COMMON_ERRORS;
  const codes = op.keyed === false ? op.errors : [...common, ...op.errors];
  const responses: Record<string, unknown> = {
    "200": {
      description: op.summary,
      content: {
        "application/json": {
          schema: { $ref: `#/components/schemas/${op.answer}` },
          ...exampleOf(example?.answer),
        },
      },
    },
  };
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const { status } = ERROR_CODES[code];
    byStatus.set(status, [...byStatus.get(status) ?? [], code]);
  }
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: list.map((code) => `\`${code}\`: ${ERROR_CODES[code].when}`).join(". "),
      content: { "application/json": { schema: errorSchema(list) } },
    };
  }
  return {
    operationId: op.id,
    tags: [op.tag],
    summary: op.summary,
    description: op.description,
    // OpenAPI 3.1 lets a non-OAuth scheme list the roles an operation needs: here, its scope.
    security: op.keyed === false ? [] : [{ apiKey: [op.scope ?? "read"] }],
    ...(parameters.length ? { parameters } : {}),
    ...(op.body
      ? {
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: { $ref: `#/components/schemas/${op.body}` },
              ...exampleOf(example?.body),
            },
          },
        },
      }
      : {}),
    responses,
  };
}

function exampleOf(value: unknown): { example?: unknown } {
  return value === undefined ? {} : { example: value };
}

function errorSchema(codes: readonly ErrorCode[]): Record<string, unknown> {
  return {
    type: "object",
    required: ["error"],
    additionalProperties: false,
    properties: {
      error: {
        type: "object",
        required: ["code", "message"],
        additionalProperties: false,
        properties: {
          code: { type: "string", enum: codes },
          message: { type: "string", description: "For people; may change" },
        },
      },
    },
  };
}

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return neverAsFalse(rest) as Record<string, unknown>;
}

/**
 * Writes zod's `never` (`{ not: {} }`) as the schema `false`: the same meaning in JSON Schema, and
 * the form type generators turn into `?: never` (a key that must be absent).
 */
function neverAsFalse(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(neverAsFalse);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0]![0] === "not") {
    const inner = entries[0]![1];
    if (typeof inner === "object" && inner !== null && Object.keys(inner).length === 0) {
      return false;
    }
  }
  return Object.fromEntries(entries.map(([key, inner]) => [key, neverAsFalse(inner)]));
}
