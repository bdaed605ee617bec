/**
 * The OpenAPI 3.1 document of the game API, built from the zod schemas the routes validate with
 * (bodies and queries) and the answer schemas in `answers.ts`, with zod's own JSON Schema output
 * (draft 2020-12, the dialect OpenAPI 3.1 uses). Routes stay plain Hono routes; this table is
 * the one place that describes them.
 *
 * Adding a route: add one entry to `V1_OPERATIONS` (path in OpenAPI form, its answer schema in
 * `ANSWERS`, the error codes it adds). `tests/openapi_test.ts` fails while a `/v1` route of the
 * app has no entry, and every `/v1` answer the test suite receives is validated against the
 * document, so an undescribed field or error code fails the test that provoked it.
 */
import { z } from "zod";
import { txBodySchema } from "../../lib/tx/body.ts";
import { MAX_IDEMPOTENCY_KEY_CHARS } from "../../lib/tx/body.ts";
import {
  assetsAnswer,
  healthAnswer,
  playerWalletAnswer,
  playerWalletsAnswer,
  projectAnswer,
  signatureStatusAnswer,
  solBalanceAnswer,
  tokenBalancesAnswer,
  txResultAnswer,
} from "./answers.ts";
import {
  BODY_ERRORS,
  ERROR_CODES,
  type ErrorCode,
  SOL_TX_ERRORS,
  TOKEN_TX_ERRORS,
  V1_COMMON_ERRORS,
} from "./error_codes.ts";
import { bulkSchema, USER_ID_PATTERN } from "./players.ts";
import { assetsQuery, tokensQuery } from "./wallets.ts";

/** Named answer schemas: `components.schemas` of the document. */
const ANSWERS = {
  Health: healthAnswer,
  Project: projectAnswer,
  PlayerWallet: playerWalletAnswer,
  PlayerWallets: playerWalletsAnswer,
  SolBalance: solBalanceAnswer,
  TokenBalances: tokenBalancesAnswer,
  Assets: assetsAnswer,
  SignatureStatus: signatureStatusAnswer,
  TxResult: txResultAnswer,
} as const;

/** Named request bodies: `components.schemas` too. */
const BODIES = {
  PlayerWalletsRequest: bulkSchema,
  TransferSolRequest: txBodySchema("transfer-sol"),
  TokenTxRequest: txBodySchema("transfer-token"),
} as const;

const addressParam = z.string().meta({ description: "Base58 Solana address" });

/** One route as the document describes it. */
interface Operation {
  method: "get" | "post";
  /** OpenAPI path form: `{name}` for a parameter. */
  path: string;
  summary: string;
  description: string;
  /** False only for `/health`: every `/v1` route needs the API key. */
  keyed?: false;
  pathParams?: Record<string, z.ZodType>;
  query?: z.ZodObject;
  body?: keyof typeof BODIES;
  answer: keyof typeof ANSWERS;
  /** Codes beyond `V1_COMMON_ERRORS`, in the order they are checked. */
  errors: readonly ErrorCode[];
}

/** Every route of the game API (and `/health`). */
export const V1_OPERATIONS: readonly Operation[] = [
  {
    method: "get",
    path: "/health",
    summary: "Service status",
    description: "No key needed; not counted toward any quota.",
    keyed: false,
    answer: "Health",
    errors: [],
  },
  {
    method: "get",
    path: "/v1/project",
    summary: "The key's project",
    description: "Read fresh, so dashboard changes show at once.",
    answer: "Project",
    errors: [],
  },
  {
    method: "get",
    path: "/v1/players/{userId}/wallet",
    summary: "One player's wallet",
    description: "Read from the service's own store, not the chain.",
    pathParams: {
      userId: z.string().regex(USER_ID_PATTERN).meta({
        description: "The player's Roblox user id (a positive integer)",
      }),
    },
    answer: "PlayerWallet",
    errors: ["invalid_user_id"],
  },
  {
    method: "post",
    path: "/v1/players/wallets",
    summary: "Many players' wallets",
    description: "Up to 200 user ids; the whole lookup counts as one request.",
    body: "PlayerWalletsRequest",
    answer: "PlayerWallets",
    errors: BODY_ERRORS,
  },
  {
    method: "get",
    path: "/v1/wallets/{address}/balance",
    summary: "SOL balance",
    description: "On the project's cluster at confirmed commitment; cached about 10 seconds.",
    pathParams: { address: addressParam },
    answer: "SolBalance",
    errors: ["invalid_address"],
  },
  {
    method: "get",
    path: "/v1/wallets/{address}/tokens",
    summary: "Token balances",
    description: "One entry per mint, Token and Token-2022 accounts summed. With `mint`, exactly " +
      "one entry (zero amounts when none is held). Cached about 10 seconds.",
    pathParams: { address: addressParam },
    query: tokensQuery,
    answer: "TokenBalances",
    errors: ["invalid_request", "invalid_address", "invalid_mint"],
  },
  {
    method: "get",
    path: "/v1/wallets/{address}/assets",
    summary: "NFTs owned",
    description: "Through the cluster's DAS endpoint when configured, otherwise classic NFTs " +
      "read from the chain (`image` then null). At most the first 1,000; cached about 10 seconds.",
    pathParams: { address: addressParam },
    query: assetsQuery,
    answer: "Assets",
    errors: ["invalid_request", "invalid_address"],
  },
  {
    method: "get",
    path: "/v1/signatures/{signature}",
    summary: "Transaction signature status",
    description: "Searches the node's transaction history on the project's cluster; not cached.",
    pathParams: { signature: z.string().meta({ description: "Base58 transaction signature" }) },
    answer: "SignatureStatus",
    errors: ["invalid_signature"],
  },
  {
    method: "post",
    path: "/v1/tx/transfer-sol",
    summary: "Send SOL",
    description: "Signed and sent by the managed wallet; waits up to 15 s for confirmation, then " +
      "answers `submitted`. Safe to retry with the same `idempotencyKey`. A `failed` status is " +
      "an answer, not an error.",
    body: "TransferSolRequest",
    answer: "TxResult",
    errors: [...BODY_ERRORS, ...SOL_TX_ERRORS],
  },
  {
    method: "post",
    path: "/v1/tx/transfer-token",
    summary: "Send a token",
    description: "Checked transfer under the mint's own token program; the recipient's " +
      "associated token account is created if needed. Same waiting and retry rules as SOL.",
    body: "TokenTxRequest",
    answer: "TxResult",
    errors: [...BODY_ERRORS, ...TOKEN_TX_ERRORS],
  },
  {
    method: "post",
    path: "/v1/tx/mint-token",
    summary: "Mint a token",
    description: "The managed wallet must be the mint authority, otherwise the answer is 200 " +
      "with `failed`. Same waiting and retry rules as SOL.",
    body: "TokenTxRequest",
    answer: "TxResult",
    errors: [...BODY_ERRORS, ...TOKEN_TX_ERRORS],
  },
  {
    method: "get",
    path: "/v1/tx/{idempotencyKey}",
    summary: "Transaction request status",
    description: "Authoritative status of the key's latest attempt.",
    pathParams: {
      idempotencyKey: z.string().meta({ minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_CHARS }),
    },
    answer: "TxResult",
    errors: ["not_found"],
  },
];

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
    paths[op.path] ??= {};
    paths[op.path][op.method] = operationObject(op);
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
        "request counts toward the quotas (600 a minute, 100,000 a UTC day), whatever its answer.",
    },
    servers: [{ url: options.serverUrl }],
    security: [{ apiKey: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "x-api-key",
          description: "A project API key, created in the dashboard",
        },
      },
    },
  };
}

function operationObject(op: Operation): Record<string, unknown> {
  const parameters: unknown[] = [];
  for (const [name, schema] of Object.entries(op.pathParams ?? {})) {
    const { description, ...rest } = jsonSchema(schema, "input");
    parameters.push({ name, in: "path", required: true, description, schema: rest });
  }
  if (op.query) {
    const query = jsonSchema(op.query, "input") as {
      properties: Record<string, Record<string, unknown>>;
      required?: string[];
    };
    for (const [name, schema] of Object.entries(query.properties)) {
      parameters.push({
        name,
        in: "query",
        required: query.required?.includes(name) ?? false,
        schema,
      });
    }
  }
  const codes = op.keyed === false ? op.errors : [...V1_COMMON_ERRORS, ...op.errors];
  const responses: Record<string, unknown> = {
    "200": {
      description: op.summary,
      content: { "application/json": { schema: { $ref: `#/components/schemas/${op.answer}` } } },
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
    operationId: operationId(op),
    summary: op.summary,
    description: op.description,
    ...(op.keyed === false ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(op.body
      ? {
        requestBody: {
          required: true,
          content: { "application/json": { schema: { $ref: `#/components/schemas/${op.body}` } } },
        },
      }
      : {}),
    responses,
  };
}

/** `getV1PlayersUserIdWallet`-style ids, stable and unique per method and path. */
function operationId(op: Operation): string {
  const words = op.path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return op.method + words.map((w) => w[0].toUpperCase() + w.slice(1)).join("");
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
  return rest;
}
