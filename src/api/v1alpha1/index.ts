export * from './crd.ts';
export * from './transaction.ts';
