// The one catalogue of error codes (`core/error_codes.ts`): every code the service answers is in
// it, thrown by code alone with the catalogue's status, and the game API's document agrees.
import assert from "node:assert/strict";
import { API_ERRORS, type ApiErrorCode } from "../../core/error_codes.ts";
import { ApiError } from "../../core/api_error.ts";
import { ERROR_CODES } from "../../routes/v1/error_codes.ts";
import { buildOpenApiDocument } from "../../routes/v1/openapi.ts";

const ROOT = new URL("../../", import.meta.url);
/** The floors that answer errors. */
const SOURCE_FOLDERS = ["core/", "http/", "lib/", "components/", "routes/", "jobs/"];

/** Every `.ts`/`.tsx` file under `folder`, with its text. */
function* sourcesUnder(folder: string): Generator<[path: string, text: string]> {
  for (const entry of Deno.readDirSync(new URL(folder, ROOT))) {
    const path = `${folder}${entry.name}`;
    if (entry.isDirectory) yield* sourcesUnder(`${path}/`);
    else if (/\.tsx?$/.test(entry.name)) {
      yield [path, Deno.readTextFileSync(new URL(path, ROOT))];
    }
  }
}

/**
 * Each `new ApiError(` call of the service and each `errorBody(` with a literal code (the others
 * render a thrown `ApiError`): where, and its first argument.
 */
function answeredCodes(): { site: string; first: string }[] {
  const calls = [];
  for (const folder of SOURCE_FOLDERS) {
    for (const [path, text] of sourcesUnder(folder)) {
      if (path === "core/api_error.ts" || path === "core/error_codes.ts") continue; // define them
      for (const m of text.matchAll(/(?:new ApiError\(|errorBody\((?=\s*"))\s*([^,]*),/g)) {
        const line = text.slice(0, m.index).split("\n").length;
        calls.push({ site: `${path}:${line}`, first: m[1]!.trim() });
      }
    }
  }
  return calls;
}

Deno.test("Every error the service builds names a catalogue code, and no status of its own", () => {
  const calls = answeredCodes();
  assert.ok(calls.length > 80, `only ${calls.length} call sites found`);
  const strays = calls.filter(({ first }) => {
    const code = first.match(/^"([a-z_]+)"$/)?.[1];
    return !(code && Object.hasOwn(API_ERRORS, code));
  });
  assert.deepEqual(strays, [], "a call whose first argument is not a catalogue code");
});

Deno.test("Every code of the catalogue is answered somewhere", () => {
  const answered = new Set(answeredCodes().map(({ first }) => first.replaceAll('"', "")));
  assert.deepEqual(Object.keys(API_ERRORS).filter((code) => !answered.has(code)), []);
});

Deno.test("An ApiError carries its code's status from the catalogue", () => {
  for (const [code, info] of Object.entries(API_ERRORS)) {
    const error = new ApiError(code as ApiErrorCode, "message");
    assert.equal(error.status, info.status, code);
    assert.equal(error.code, code);
    assert.equal(error.message, "message");
  }
});

Deno.test("The game API's document lists each code under the catalogue's status, and every /v1 code", () => {
  const document = buildOpenApiDocument({ serverUrl: "http://localhost", title: "Blocklink" });
  const listed = new Set<string>();
  for (const operations of Object.values(document.paths)) {
    for (const { responses } of Object.values(operations as Record<string, Operation>)) {
      for (const [status, response] of Object.entries(responses)) {
        for (
          const code
            of response.content?.["application/json"]?.schema?.properties?.error?.properties?.code
              ?.enum ?? []
        ) {
          listed.add(code);
          assert.equal(String(API_ERRORS[code as ApiErrorCode].status), status, code);
        }
      }
    }
  }
  assert.deepEqual([...listed].sort(), Object.keys(ERROR_CODES).sort());
});

Deno.test("Every code of the spec's tables of errors is in the catalogue with the spec's status", () => {
  const spec = Deno.readTextFileSync(new URL("../shared/spec/service-api.md", ROOT));
  const rows = [...spec.matchAll(/^\| `?([a-z_]+)`? \| (\d{3}) \|/gm)];
  assert.ok(rows.length > 20, `only ${rows.length} rows read`);
  const differing = rows
    .map(([, code, status]) => [code!, Number(status)] as const)
    .filter(([code, status]) => API_ERRORS[code as ApiErrorCode]?.status !== status);
  assert.deepEqual(differing, []);
});

/** The part of an OpenAPI operation read here. */
interface Operation {
  responses: Record<string, {
    content?: {
      "application/json"?: {
        schema?: { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } };
      };
    };
  }>;
}
