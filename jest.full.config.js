// The full suite: tests that need more than the README's requirements (python3-optuna for the Optuna
// adapter). .ci/run installs those and runs it; `npm test` leaves it out, so it passes on a fresh machine.
// Run it: npm run test:full
import base from './jest.config.js';

export default { ...base, testMatch: ['<rootDir>/test/full/**/*.test.ts'], testTimeout: 60000 };
