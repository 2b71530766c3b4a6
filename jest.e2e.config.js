import base from './jest.config.js';

// End-to-end tests: `lab` as the README installs it (a built copy of the committed files, made by the global
// setup), real server processes, Debian's Chromium driven by playwright-core, and a real terminal (tmux).
export default {
  ...base,
  testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
  testTimeout: 60000,
  maxWorkers: 1,
  globalSetup: '<rootDir>/test/e2e/global-setup.ts',
  globalTeardown: '<rootDir>/test/e2e/global-teardown.ts',
};
