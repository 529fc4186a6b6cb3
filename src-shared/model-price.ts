/** Dollars per million tokens of a model, by kind of token. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** How a provider's or a model's names look, as genai-prices writes it (case-insensitive but `regex`). */
export type NameRule =
  | { equals: string }
  | { starts_with: string }
  | { ends_with: string }
  | { contains: string }
  | { regex: string }
  | { or: NameRule[] }
  | { and: NameRule[] };

/** A provider's models, each with its price (null: not priced per token). */
export interface PricedProvider {
  id: string;
  match: NameRule;
  models: { id: string; match: NameRule; price: ModelPrice | null }[];
}
