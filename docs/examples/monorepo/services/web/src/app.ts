export const app = "web";
