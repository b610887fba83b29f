/**
 * Yielding to the host event loop: the one host primitive both runtimes need, kept here
 * so that `runtime/sim` and `runtime/node` stay separate layers (docs/architecture.md,
 * "Dependency rules"). It is not a source of nondeterminism: it only decides *when* the
 * caller continues, never *what* happens.
 *
 * `yieldToHost()` resolves on the next `setImmediate` turn. Every microtask queued
 * before the call (and every microtask those queue in turn) runs before it resolves,
 * because Node drains the whole microtask queue before it moves to the next macrotask.
 * The simulator relies on exactly this: after each virtual event it awaits this so
 * promise continuations started by the event finish before the next event runs. With
 * no real IO in the simulator, that ordering is a pure function of the inputs.
 */

/** Resolves on the next macrotask turn, after all currently pending microtasks. */
export function yieldToHost(): Promise<void> {
  return new Promise<void>((resolve) => {
    setImmediate(resolve);
  });
}

/**
 * Calls `fn` on the next macrotask turn, after all currently pending microtasks: the
 * callback form of yieldToHost, for a loop that yields after every step (the
 * simulator's run loop). It allocates no promise per turn.
 */
export function onNextHostTurn(fn: () => void): void {
  setImmediate(fn);
}
