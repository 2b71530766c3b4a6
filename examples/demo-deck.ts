/**
 * The demo deck: what `lab serve` loads when no deck is given, so a new user sees a working lab at once.
 *
 * A deck module exports devices; the export name is the device name. Devices made with `driver.with(...)`
 * are created by labdeck from a driver (here the simulated instruments in ../plugins). A plain object or
 * class instance works too: labdeck reads its methods, parameter names and defaults ("zero-config"), as
 * the `stirrer` below shows; the UI marks such schemas as inferred.
 */
import { simBalance } from '../plugins/sim-balance.js';
import { simHotplate } from '../plugins/sim-hotplate.js';
import { simNoop } from '../plugins/sim-noop.js';
import { simPump } from '../plugins/sim-pump.js';
import { simReactor } from '../plugins/sim-reactor.js';

/** Pump and balance share the default simulated bench: what the pump doses, the balance weighs. */
export const pump = simPump.with({ delay_ms: 30 });
export const balance = simBalance.with({ delay_ms: 30, noise: 0.002 });
export const hotplate = simHotplate.with({ delay_ms: 25 });
export const reactor = simReactor.with({ delay_ms: 40, noise: 0.01 });
export const noop = simNoop.with({ delay_ms: 0 });

/** A magnetic stirrer written as plain code, with no labdeck schema: its form is inferred. */
class Stirrer {
  private rpm = 0;

  /**
   * Start stirring at a speed.
   * @param {number} rpm Speed in revolutions per minute (0-1500)
   * @returns {number} the new speed
   */
  set_speed(rpm = 300) {
    this.rpm = Math.max(0, Math.min(1500, Number(rpm)));
    return this.rpm;
  }

  /** Stop stirring. */
  stop() {
    this.rpm = 0;
    return this.rpm;
  }

  /** Current speed, rpm. */
  speed() {
    return this.rpm;
  }

  // No default and no documentation: this parameter becomes a JSON field ("inferred").
  program(steps: unknown) {
    const list = Array.isArray(steps) ? steps : [];
    return { steps: list.length, last_rpm: this.rpm };
  }
}

export const stirrer = new Stirrer();
