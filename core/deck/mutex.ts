/**
 * A FIFO mutex with a waiting timeout: one instrument does one thing at a time, callers are served in
 * arrival order, and a caller that waited too long gives up. The uncontended path allocates nothing.
 */
interface Waiter {
  resolve(): void;
  timer: ReturnType<typeof setTimeout> | null;
}

export class Mutex {
  private locked = false;
  private readonly waiters: Waiter[] = [];

  /** Take the lock if it is free right now. */
  tryAcquire(): boolean {
    if (this.locked) return false;
    this.locked = true;
    return true;
  }

  /**
   * Wait for the lock. Resolves true when acquired, false when `timeoutMs` passed first (the caller is
   * then removed from the queue). A non-finite timeout waits forever.
   */
  acquire(timeoutMs = Infinity): Promise<boolean> {
    if (this.tryAcquire()) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = { resolve: () => resolve(true), timer: null };
      if (Number.isFinite(timeoutMs)) {
        waiter.timer = setTimeout(() => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          resolve(false);
        }, timeoutMs);
      }
      this.waiters.push(waiter);
    });
  }

  /** Hand the lock to the next waiter, or free it. */
  release(): void {
    const next = this.waiters.shift();
    if (next) {
      if (next.timer) clearTimeout(next.timer);
      next.resolve(); // ownership passes directly: `locked` stays true
    } else {
      this.locked = false;
    }
  }

  get isLocked(): boolean {
    return this.locked;
  }

  get queueLength(): number {
    return this.waiters.length;
  }
}
