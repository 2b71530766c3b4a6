/** New steps, a step in one line, and what a block does wrong. */
import { argText } from './args.js';
import type { Step, StepKind } from './document.js';

export type BlockKind = Exclude<StepKind, 'call'>;

export function newCall(instrument: string, method: string): Step {
  return { kind: 'call', instrument, method, args: {} };
}

export function newBlock(kind: BlockKind): Step {
  switch (kind) {
    case 'wait':
      return { kind: 'wait', seconds: 1 };
    case 'pause':
      return { kind: 'pause', message: '' };
    case 'input':
      return { kind: 'input', prompt: '', save_as: '', schema: { type: 'number' } };
    case 'repeat':
      return { kind: 'repeat', times: 2, steps: [] };
    case 'if':
      return { kind: 'if', condition: { left: { value: 0 }, op: '>', right: { value: 0 } }, then: [], else: [] };
  }
}

/** One line about a step, for lists and the read-only view: `pump.dose(volume_ml: #volume) → dosed`. */
export function summary(step: Step): string {
  switch (step.kind) {
    case 'call': {
      const args = Object.entries(step.args ?? {}).map(([k, a]) => `${k}: ${argText(a)}`);
      return `${step.instrument}.${step.method}(${args.join(', ')})${step.save_as ? ` → ${step.save_as}` : ''}`;
    }
    case 'wait':
      return `wait ${step.seconds} s`;
    case 'pause':
      return `pause${step.message ? `: ${step.message}` : ''}`;
    case 'input':
      return `ask: ${step.prompt || '…'}${step.save_as ? ` → ${step.save_as}` : ''} (${step.schema?.type ?? '?'})`;
    case 'repeat':
      return `repeat ${step.times}×`;
    case 'if':
      return `if ${argText(step.condition.left)} ${step.condition.op} ${argText(step.condition.right)}`;
  }
}

/** What a block does wrong that is not an error: a repeat or an if with nothing to run. Null when fine. */
export function blockWarning(step: Step): string | null {
  if (step.kind === 'repeat') {
    if (!Array.isArray(step.steps) || step.steps.length === 0) return 'This repeat has no steps: drag steps into it, or delete it.';
    if (step.times === 0) return 'This repeat runs its steps 0 times: they never run.';
  }
  if (step.kind === 'if' && !(step.then?.length ?? 0) && !(step.else?.length ?? 0)) return 'This if has no steps in either branch: it does nothing.';
  return null;
}
