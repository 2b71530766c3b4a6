/**
 * Operations on the lab's own settings (DESIGN.md §15): its display mode and logo (read, and replaced: audited
 * `customize-logo`), and what the lab was started with, as the pages and `lab run` show it: the deck file,
 * a change to it on disk that needs a restart, and the plugin files that failed to load. Reading is not audited.
 */
import type { Branding } from '../branding.js';
import type { DeckChange } from '../deck/watch.js';
import type { PluginError } from '../plugins/index.js';
import type { Caller } from './caller.js';
import { audit, type Lab } from './lab.js';

export function settingOperations(lab: Lab) {
  return {
    /** The display mode and whether there is a logo (every page's context). */
    branding(): Promise<Branding> {
      return lab.branding.get();
    },

    /** The logo's bytes and type, or null when none was uploaded. */
    logo(): Promise<{ data: Buffer; type: string } | null> {
      return lab.branding.logo();
    },

    /** The display mode and logo (a logo replaced when given). */
    async setBranding(caller: Caller, mode: unknown, logo?: Buffer): Promise<Branding> {
      const branding = await lab.branding.update(mode, logo);
      await audit(lab, caller, 'customize-logo', { mode: branding.mode, logo: !!logo });
      return branding;
    },

    /** The startup deck file (null when labdeck started without one). */
    deckFile(): string | null {
      return lab.deckFile;
    },

    /** The first change to the deck on disk since start (a restart loads it), or undefined. */
    deckChanged(): DeckChange | null | undefined {
      return lab.deckWatch?.changed;
    },

    /** The plugin files that failed to load, and why (the last good version of each stays). */
    pluginErrors(): PluginError[] {
      return lab.plugins.errors();
    },
  };
}
