/**
 * Checks real answers against the OpenAPI document. `call()` (test_app.ts) runs every `/v1` and
 * `/health` answer of the test suite through `checkAnswer`, so any test that receives an answer
 * the document does not describe (a field, an error code, a status) fails with the difference.
 * Each check is also recorded, so `tests/v1/openapi_test.ts` can show every route was sampled.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { buildOpenApiDocument, type OpenApiDocument } from "../../routes/v1/openapi.ts";
import { addFormats } from "./openapi_formats.ts";

/** One answer checked: `METHOD /template STATUS`. */
type Sample = string;

const document: OpenApiDocument = buildOpenApiDocument({
  serverUrl: "http://localhost:8000",
  title: "Blocklink",
});
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(document, "openapi.json");

const templates = Object.keys(document.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  // Literal paths win over templates (`/v1/tx/transfer-sol` before `/v1/tx/{key}`).
  params: (template.match(/\{/g) ?? []).length,
})).sort((a, b) => a.params - b.params);

const validators = new Map<string, ValidateFunction>();
const samples = new Set<Sample>();

/** The answers checked so far in this process. */
export function checkedSamples(): ReadonlySet<Sample> {
  return samples;
}

/** The document's path template for a method and request path, or null when none describes it. */
export function findOperation(method: string, pathname: string): string | null {
  const lower = method.toLowerCase();
  for (const { template, pattern } of templates) {
    if (pattern.test(pathname) && document.paths[template]?.[lower]) return template;
  }
  return null;
}

/** Throws unless `body` with `status` is an answer the document describes for this request. */
export function checkAnswer(
  request: { method: string; url: string },
  answer: { status: number; body: unknown },
): void {
  const { pathname } = new URL(request.url);
  const template = findOperation(request.method, pathname);
  if (!template) {
    // Unknown routes answer the plain 404 of every path; anything else is an undocumented route.
    const body = answer.body as { error?: { code?: string } };
    if (answer.status === 404 && body?.error?.code === "not_found") return;
    throw new Error(`${request.method} ${pathname} is not in the OpenAPI document`);
  }
  const method = request.method.toLowerCase();
  const operation = document.paths[template]?.[method] as
    | { responses: Record<string, unknown> }
    | undefined;
  if (!operation) throw new Error(`${request.method} ${template} has no operation`);
  const { responses } = operation;
  const status = String(answer.status);
  if (!responses[status]) {
    throw new Error(
      `${request.method} ${template} answered ${status}, which the OpenAPI document does not ` +
        `list: ${JSON.stringify(answer.body)}`,
    );
  }
  const pointer = ["paths", template, method, "responses", status, "content", "application/json"]
    .map((part) => encodeURIComponent(part.replaceAll("~", "~0").replaceAll("/", "~1"))).join("/");
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi.json#/${pointer}/schema` });
    validators.set(pointer, validate);
  }
  if (!validate(answer.body)) {
    throw new Error(
      `${request.method} ${template} ${status} does not match the OpenAPI document: ` +
        `${ajv.errorsText(validate.errors)}; answer ${JSON.stringify(answer.body)}`,
    );
  }
  samples.add(`${request.method.toUpperCase()} ${template} ${status}`);
}

/** Checks a Response (its clone is read) when it answers a documented prefix. */
export async function checkResponse(request: Request, response: Response): Promise<void> {
  const { pathname } = new URL(request.url);
  if (!pathname.startsWith("/v1/") && pathname !== "/health") return;
  const text = await response.clone().text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${request.method} ${pathname} answered ${response.status} without JSON`);
  }
  checkAnswer({ method: request.method, url: request.url }, { status: response.status, body });
}
