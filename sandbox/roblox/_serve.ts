import type { Hono } from "hono";

/** Where a stand-in listens; port 0 picks a free port. */
export interface ListenOptions {
  port?: number;
  hostname?: string;
}

/** A running loopback server. */
export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/** Serves a Hono app on loopback and returns its origin (no trailing slash). */
export function serveApp(app: Hono, options: ListenOptions = {}): Promise<RunningServer> {
  const hostname = options.hostname ?? "127.0.0.1";
  return new Promise((resolve) => {
    const server = Deno.serve({
      port: options.port ?? 0,
      hostname,
      onListen({ port }) {
        const host = hostname.includes(":") ? `[${hostname}]` : hostname;
        resolve({
          url: `http://${host}:${port}`,
          async close() {
            await server.shutdown();
          },
        });
      },
    }, app.fetch);
  });
}
