/**
 * A misbehaving RPC node in front of the sandbox cluster: a loopback JSON-RPC proxy whose faults
 * are drawn from a seeded generator, so a run can be repeated. It stands in for the public nodes
 * and pools a deployment talks to: slow answers, 503s, calls that never answer (time-outs), and
 * `sendTransaction` calls that reach the cluster but whose answer is lost. Chain-side faults
 * (never landing, landing late, hidden or lagging history) are the sandbox's own fault control.
 */

/**
 * The faults armed on the proxy; each share is a probability per call (0 to 1). A share above 0
 * also owes one fault: the first call it can fault after arming meets it, so a round that arms a
 * fault meets it however few calls a fast or slow machine makes in it.
 */
export interface RpcFaults {
  /** Every call first waits a uniform time in this range, in milliseconds. */
  delayMs?: readonly [number, number];
  /** Share of calls answered HTTP 503 without reaching the cluster. */
  unavailable?: number;
  /** Share of calls that never get an answer (the caller's time-out ends them). */
  hang?: number;
  /** Share of `sendTransaction` calls that reach the cluster but whose answer is lost (503). */
  lostSendAnswers?: number;
  /**
   * The node keeps no address history: `getSignaturesForAddress` is answered with its JSON-RPC
   * error -32011 (transaction history not available), as a node run without it answers.
   */
  noAddressHistory?: boolean;
}

/** What the proxy did since it started. */
export interface RpcFaultStats {
  calls: number;
  delayed: number;
  unavailable: number;
  hung: number;
  lostSendAnswers: number;
  noAddressHistory: number;
}

/** A running proxy. */
export interface RpcFaultProxy extends AsyncDisposable {
  url: string;
  /** Arms `faults` (replacing the previous ones). */
  set(faults: RpcFaults): void;
  /** Disarms every fault; calls held by `hang` are answered 503. */
  clear(): void;
  stats(): RpcFaultStats;
  close(): Promise<void>;
}

/** A small seeded generator (mulberry32): the same seed draws the same faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Starts a proxy to `target` on a free port, drawing its faults from `options.seed`. */
export function startRpcFaultProxy(target: string, options: { seed: number }): RpcFaultProxy {
  const random = seededRandom(options.seed);
  let faults: RpcFaults = {};
  let owed = { unavailable: false, lostSendAnswers: false };
  let released = Promise.withResolvers<void>();
  const stats: RpcFaultStats = {
    calls: 0,
    delayed: 0,
    unavailable: 0,
    hung: 0,
    lostSendAnswers: 0,
    noAddressHistory: 0,
  };
  const unavailable = () => new Response("unavailable", { status: 503 });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.text();
    const method = methodOf(body);
    stats.calls++;
    // Every draw happens in arrival order, whatever the faults armed, so a seed repeats.
    const [delayDraw, failDraw, hangDraw, loseDraw] = [random(), random(), random(), random()];
    const armed = faults;
    if (armed.delayMs) {
      const [low, high] = armed.delayMs;
      stats.delayed++;
      await sleep(low + delayDraw * (high - low));
    }
    if (armed.noAddressHistory && method === "getSignaturesForAddress") {
      stats.noAddressHistory++;
      return Response.json({ jsonrpc: "2.0", id: idOf(body), error: NO_HISTORY });
    }
    if (failDraw < (armed.unavailable ?? 0) || owed.unavailable) {
      owed.unavailable = false;
      stats.unavailable++;
      return unavailable();
    }
    if (hangDraw < (armed.hang ?? 0)) {
      stats.hung++;
      // Held until the faults are cleared: the caller's own time-out ends its wait first.
      await released.promise;
      return unavailable();
    }
    const upstream = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    if (
      method === "sendTransaction" &&
      (loseDraw < (armed.lostSendAnswers ?? 0) || owed.lostSendAnswers)
    ) {
      owed.lostSendAnswers = false;
      stats.lostSendAnswers++;
      await upstream.body?.cancel();
      return unavailable();
    }
    return new Response(await upstream.arrayBuffer(), {
      status: upstream.status,
      headers: { "content-type": "application/json" },
    });
  });
  const clear = () => {
    faults = {};
    owed = { unavailable: false, lostSendAnswers: false };
    released.resolve();
    released = Promise.withResolvers<void>();
  };
  const close = async () => {
    clear();
    await server.shutdown();
  };
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    set: (next) => {
      faults = next;
      owed = {
        unavailable: (next.unavailable ?? 0) > 0,
        lostSendAnswers: (next.lostSendAnswers ?? 0) > 0,
      };
    },
    clear,
    stats: () => ({ ...stats }),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Agave's answer when transaction history is off (`--enable-rpc-transaction-history` unset). */
const NO_HISTORY = { code: -32011, message: "Transaction history is not available from this node" };

function idOf(body: string): unknown {
  try {
    return JSON.parse(body).id ?? null;
  } catch {
    return null;
  }
}

function methodOf(body: string): string {
  try {
    return String(JSON.parse(body).method ?? "");
  } catch {
    return "";
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
