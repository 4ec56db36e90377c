export * from './analysis.ts';
export * from './analysis-crd.ts';
export * from './crd.ts';
export * from './transaction.ts';
