/**
 * What every part of the plugin contract shares at run time: its version and the error a definition that
 * breaks it throws. Its own module so the contract's modules (index.ts, optimizer.ts) both import it and not
 * each other (no import circle); plugin authors import these from core/contracts, as before.
 */

/** Bumped on any breaking change to the shapes below; plugins declare the version they were written for. */
export const CONTRACT_VERSION = 1 as const;

export class ContractError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContractError';
  }
}
