import base from './jest.config.js';

// End-to-end tests: a real server process and Debian's Chromium driven by playwright-core.
export default { ...base, testMatch: ['<rootDir>/test/e2e/**/*.test.ts'], testTimeout: 60000, maxWorkers: 1 };
