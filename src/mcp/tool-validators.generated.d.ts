// The types of tool-validators.generated.js (Ajv standalone code, one validator per tool). Written by hand:
// the generator writes only the JavaScript.

import type { ValidateFunction } from 'ajv';

export declare const read: ValidateFunction;
export declare const write: ValidateFunction;
export declare const edit: ValidateFunction;
export declare const bash: ValidateFunction;
export declare const grep: ValidateFunction;
export declare const find: ValidateFunction;
export declare const ls: ValidateFunction;
export declare const harness_task: ValidateFunction;
