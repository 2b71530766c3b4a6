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
};
