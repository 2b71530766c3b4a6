/**
 * The attention list as an operation (DESIGN.md §17, §15): everything that waits for a person across the lab
 * (inputs, pause steps, failed steps, approvals, held queues, interrupted runs, labdecks offline with work),
 * read by every door the same way (core/attention gathers it).
 */
import type { AttentionItem } from '../attention/index.js';
import type { Lab } from './lab.js';

export function attentionOperations(lab: Pick<Lab, 'attention'>) {
  return {
    list(): Promise<AttentionItem[]> {
      return lab.attention.list();
    },
    count(): Promise<number> {
      return lab.attention.count();
    },
  };
}
