// The HTTP transport of AgentCkptClient. For an http:// sidecar address on Node, node:http with a
// keep-alive agent: on loopback it costs about 0.6 ms less per request than the platform fetch
// (undici) at p50 on a 2-core machine (bench/peers/step.mjs measures both). A fetch given in the
// client's options, or an https:// address, goes through fetch.
import http from "node:http";

/** One request as the client sends it. */
export interface TransportRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

/** The reply: status and body text. Rejects on a network error or an aborted signal. */
export type Transport = (url: string, req: TransportRequest) => Promise<{ status: number; text: string }>;

export function fetchTransport(fetchFn: typeof fetch): Transport {
  return async (url, req) => {
    const res = await fetchFn(url, { method: req.method, headers: req.headers, body: req.body, signal: req.signal });
    return { status: res.status, text: await res.text() };
  };
}

/**
 * node:http on a keep-alive agent of its own, with no proxy. Idle connections do not keep the
 * process alive (Node unrefs an agent's free sockets). No request is retried: a connection the sidecar closed
 * (a restart) fails the request in flight on it, as with fetch.
 */
export function nodeHttpTransport(): Transport {
  // Never through a proxy: the sidecar is on the pod's loopback, out of an egress proxy's reach.
  // Node releases whose agents can take a proxy from the environment (NODE_USE_ENV_PROXY) read
  // `proxyEnv: null` as "no proxy"; older ones ignore the option (not in @types/node 20).
  const agent = new http.Agent({ keepAlive: true, proxyEnv: null } as http.AgentOptions);
  return (url, req) =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { ...req.headers };
      if (req.body !== undefined) headers["content-length"] = Buffer.byteLength(req.body);
      const request = http.request(url, { method: req.method, headers, agent, signal: req.signal }, (res) => {
        const chunks: string[] = [];
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: chunks.join("") }));
        res.on("error", reject);
        // A connection that ends mid-reply (the sidecar stopped, the call aborted) settles it too.
        res.on("close", () => {
          if (!res.complete) reject(req.signal.aborted ? req.signal.reason : new Error("the connection closed before the reply ended"));
        });
      });
      request.on("error", reject);
      request.end(req.body);
    });
}
