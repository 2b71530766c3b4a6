// Unit and API tests. ESM throughout: TypeScript is transformed by @swc/jest, `.js` import
// specifiers (required by NodeNext) are mapped back to the `.ts` sources.
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', tsx: true },
      transform: { react: { runtime: 'automatic' } },
      target: 'es2022',
    },
    module: { type: 'es6' },
  },
];

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts', '.tsx'],
  transform: { '^.+\\.(t|j)sx?$': swc },
  transformIgnorePatterns: ['/node_modules/'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/api/**/*.test.ts'],
  testTimeout: 20000,
  // Two workers on the 2-core machines labs and CI have (jest's default, cores − 1, leaves one idle while
  // most suites wait on child processes, sockets and the database): npm test answers in about half the time.
  maxWorkers: 2,
};
