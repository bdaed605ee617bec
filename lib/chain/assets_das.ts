/** NFTs a wallet holds, read through a Digital Asset Standard (DAS) JSON-RPC endpoint. */
import type { Address } from "@solana/kit";
import { z } from "zod";
import type { Asset } from "./assets.ts";
import { type ReadBudget, readBudgetedText, ReadBudgetError } from "./read_budget.ts";

/** A DAS endpoint answered with an HTTP error, a JSON-RPC error or an unexpected shape. */
export class DasError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DasError";
  }
}

const text = z.string().nullish();

const dasAssetSchema = z.object({
  id: z.string(),
  interface: text,
  content: z.object({
    metadata: z.object({ name: text }).nullish(),
    links: z.object({ image: text }).nullish(),
  }).nullish(),
  grouping: z.array(z.object({
    group_key: z.string(),
    group_value: text,
    verified: z.boolean().nullish(),
  })).nullish(),
  burnt: z.boolean().nullish(),
});

const answerSchema = z.union([
  z.object({ result: z.object({ items: z.array(dasAssetSchema) }) }),
  z.object({ error: z.object({ code: z.number(), message: z.string() }) }),
]);

type DasAsset = z.output<typeof dasAssetSchema>;

/**
 * Assets of `owner` from page 1 (`getAssetsByOwner`, or `searchAssets` grouped by `collection`),
 * sorted by id so "the first N" matches the on-chain path. Compressed NFTs and Core assets appear too.
 */
export async function fetchAssetsFromDas(
  dasUrl: string,
  owner: Address,
  options: { collection?: Address; limit: number; budget: ReadBudget; abortSignal?: AbortSignal },
): Promise<Asset[]> {
  const common = {
    ownerAddress: owner,
    page: 1,
    limit: options.limit,
    sortBy: { sortBy: "id", sortDirection: "asc" },
  };
  const body = options.collection
    ? {
      method: "searchAssets",
      params: { ...common, grouping: ["collection", options.collection] },
    }
    : { method: "getAssetsByOwner", params: common };
  options.budget.spendCall();
  const response = await fetch(dasUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...body }),
    signal: options.abortSignal ?? null,
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new DasError(`DAS endpoint answered HTTP ${response.status}`);
  }
  const text = await readBudgetedText(response, options.budget).catch((e) => {
    if (e instanceof ReadBudgetError) throw e;
    return "";
  });
  const parsed = answerSchema.safeParse(parseJson(text));
  if (!parsed.success) throw new DasError("DAS endpoint sent an unexpected answer");
  if ("error" in parsed.data) {
    throw new DasError(`DAS endpoint refused ${body.method}: ${parsed.data.error.code}`);
  }
  const assets = parsed.data.result.items
    .filter((item) => item.burnt !== true)
    .map(toAsset)
    .filter((asset) => !options.collection || asset.collection === options.collection);
  return assets.slice(0, options.limit);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function toAsset(item: DasAsset): Asset {
  // DAS hides unverified collections unless asked; `verified: false` is still checked in case.
  const group = item.grouping?.find((g) => g.group_key === "collection" && g.verified !== false);
  return {
    id: item.id as Address,
    name: item.content?.metadata?.name?.trim() || null,
    collection: (group?.group_value as Address | undefined) ?? null,
    image: item.content?.links?.image || null,
    interface: item.interface ?? null,
  };
}
