/**
 * Child of join-diagnostics.test.ts: calls ClusterNode.start with options that fail
 * after the start began opening things (argv[2] JSON: `port`, a port the test holds, so
 * listening fails; or `managementPort`, a held port for the management server, so the
 * failure comes after remoting is bound), catches the error and prints
 * `{"event":"start-failed","code"}`. It then does nothing: the process must exit by
 * itself, which it only does if the failed start released every handle it opened.
 */
import { ClusterNode } from "../../src/index.js";

const config = JSON.parse(process.argv[2] ?? "{}") as { port?: number; managementPort?: number };
try {
  await ClusterNode.start({
    systemName: "sk",
    port: config.port ?? 0,
    seedNodes: [],
    ...(config.managementPort === undefined ? {} : { management: { port: config.managementPort } }),
  });
  process.stdout.write(`${JSON.stringify({ event: "started" })}\n`);
} catch (error) {
  const code = (error as { code?: unknown }).code;
  process.stdout.write(`${JSON.stringify({ event: "start-failed", code: String(code) })}\n`);
}
