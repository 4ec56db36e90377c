export * from './analysis.ts';
export * from './analysis-crd.ts';
export * from './crd.ts';
export * from './instance-claim.ts';
export * from './prune.ts';
export * from './source.ts';
export * from './source-crd.ts';
export * from './transaction.ts';
