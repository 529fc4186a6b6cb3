/** Data on disk that cannot be read back as it was written: never answered with an empty store. */
export class DataDamagedError extends Error {}
