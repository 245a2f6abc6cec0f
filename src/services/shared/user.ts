/** The one user of the emulated account, as resources name their creator or owner. */
export const EMULATOR_USER_ID = "user_minipod";
