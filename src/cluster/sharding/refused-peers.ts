/**
 * Peers whose remoting port refused a connection (nothing listens there) since their last
 * established association, as seen from this node. With shard leases this is a hint that
 * the member's process is gone, and acting on a hint is safe: a shard moved away from a
 * member that is in fact alive cannot start elsewhere before that member's lease expired
 * or was released (docs/sharding.md, "Leases and fencing"). Without leases nothing uses it.
 *
 * After kill -9 the kernel closes the dead process's sockets at once, and the next
 * connection attempt (heartbeats make one every heartbeat interval) is refused, so the
 * hint comes about a heartbeat interval after the crash instead of after the failure
 * detector's acceptable pause.
 */
import type { Disposable } from "../../base/disposable.js";
import type { Remoting } from "../remoting/remoting.js";

export class RefusedPeers {
  private readonly refused = new Set<string>();
  private readonly subscription: Disposable;

  /** `onChange` runs when a peer is added to or removed from the set. */
  constructor(remoting: Remoting, onChange: (hostPort: string, refused: boolean) => void) {
    this.subscription = remoting.onAssociationEvent((e) => {
      if (e.type === "failed" && e.failure.cause === "connection-refused") {
        if (this.refused.has(e.hostPort)) return;
        this.refused.add(e.hostPort);
        onChange(e.hostPort, true);
      } else if (e.type === "established" && this.refused.delete(e.hostPort)) {
        onChange(e.hostPort, false);
      }
    });
  }

  /** `hostPort` ("host:port") refused a connection since its last established association. */
  has(hostPort: string): boolean {
    return this.refused.has(hostPort);
  }

  dispose(): void {
    this.subscription.dispose();
  }
}
