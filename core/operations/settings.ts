/** Operations on the lab's own settings (DESIGN.md §15): its display mode and logo, audited `customize-logo`. */
import type { Branding } from '../branding.js';
import type { Caller } from './caller.js';
import { audit, type Lab } from './lab.js';

export function settingOperations(lab: Lab) {
  return {
    /** The display mode and logo (a logo replaced when given). */
    async setBranding(caller: Caller, mode: unknown, logo?: Buffer): Promise<Branding> {
      const branding = await lab.branding.update(mode, logo);
      await audit(lab, caller, 'customize-logo', { mode: branding.mode, logo: !!logo });
      return branding;
    },
  };
}
