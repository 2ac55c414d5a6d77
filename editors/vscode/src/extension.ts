/** Entry point: the real ports, the extension on them, then the server. */

import { startRutter } from "./app";
import { type ExtensionContext, type ServerHost, createPorts } from "./vscodeApi";

let host: ServerHost | undefined;

export async function activate(context: ExtensionContext): Promise<void> {
  const ports = createPorts(context);
  host = ports.server;
  const rutter = startRutter(ports);
  context.subscriptions.push(rutter);
  await ports.server.start();
}

export async function deactivate(): Promise<void> {
  await host?.stop();
  host = undefined;
}
