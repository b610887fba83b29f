/**
 * Disposable resources. Anything that owns a timer, socket, subscription or actor
 * returns a Disposable and is registered with its owner, so teardown is explicit.
 */

export interface Disposable {
  /** Releases the resource. Idempotent. */
  dispose(): void;
}

/** A Disposable that does nothing; for APIs that must return one. */
export const noopDisposable: Disposable = Object.freeze({ dispose() {} });

/** Collects disposables and releases them in reverse order of registration. */
export class DisposableStack implements Disposable {
  private items: Disposable[] = [];
  private disposed = false;

  add<T extends Disposable>(item: T): T {
    if (this.disposed) item.dispose();
    else this.items.push(item);
    return item;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const items = this.items;
    this.items = [];
    for (let i = items.length - 1; i >= 0; i--) items[i]?.dispose();
  }
}
