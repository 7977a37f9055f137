/** Every size and count limit of the API, in one place. */
export const Limits = {
  login: { min: 3, max: 32, pattern: /^[a-z0-9._-]+$/ },
  password: { min: 8, max: 128 },
  name: { min: 1, max: 100 },
  bio: { max: 2000 },
  email: { max: 254 },
  /** Default and maximum page size of every connection. */
  page: { default: 50, max: 200 },
} as const;
