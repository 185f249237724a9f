/*
 * src/model/model_bounds.h — the largest magnitudes a model's numbers may have. A finite number beyond
 * them describes no physical system, and the dynamics would carry it into products that leave the
 * range of a double (M sums m |r|^2 over bodies, bias forces m |omega|^2 |r|, M^-1 divides by it).
 * Within them, a chain of a million bodies at unit speeds forms products below 1e45 (distances
 * 1e12 m, m |r|^2 summed 1e42), far from overflow. The model builder checks every body against them (so
 * every reader benefits), and the URDF reader checks each number where it reads it, to name the
 * element's own line.
 */
#ifndef SOADYN_MODEL_BOUNDS_H
#define SOADYN_MODEL_BOUNDS_H

/* m: an offset of a joint placement or a frame, a centre of mass, a prismatic travel. 1000 km:
 * larger than any structure built or flown (the ISS spans 109 m); positions of free bodies are
 * coordinates, not model data, and are not bounded by it. */
#define SD_MAX_LENGTH 1e6

/* rad: an angle of a placement (rpy) or a revolute limit: 160 000 turns. */
#define SD_MAX_ANGLE 1e6

/* kg: a thousand times the heaviest ship ever built (6.6e8 kg). Inertia is bounded by mass and
 * size together: the mass of a body lies within SD_MAX_LENGTH of its centre of mass, so no principal
 * moment about the centre of mass exceeds m SD_MAX_LENGTH^2. */
#define SD_MAX_MASS 1e12

/* m/s^2: the magnitude of gravity; an ultracentrifuge's 1e6 g, beyond any planet or star but a
 * neutron star. */
#define SD_MAX_GRAVITY 1e7

/* m/s or rad/s: a velocity limit; the speed of light. */
#define SD_MAX_SPEED 3e8

/* N or N m: an effort limit or a Coulomb friction: the heaviest body held at the longest lever
 * against the strongest gravity. */
#define SD_MAX_EFFORT (SD_MAX_MASS * SD_MAX_GRAVITY * SD_MAX_LENGTH)

/* N m s/rad or N s/m: a viscous damping coefficient; the largest inertia (SD_MAX_MASS
 * SD_MAX_LENGTH^2) brought to rest with a time constant of a microsecond. */
#define SD_MAX_DAMPING (SD_MAX_MASS * SD_MAX_LENGTH * SD_MAX_LENGTH / 1e-6)

/* kg m^2 or kg: a rotor (reflected) inertia, as the largest body's inertia SD_MAX_MASS
 * SD_MAX_LENGTH^2 (a rotor of 1 kg m^2 behind a gear of 1e6 reflects 1e12). */
#define SD_MAX_ARMATURE (SD_MAX_MASS * SD_MAX_LENGTH * SD_MAX_LENGTH)

/* N m/rad or N/m: a joint spring's stiffness; the largest inertia oscillating at a megahertz
 * (k = I omega^2, omega = 2 pi 1e6 rounded up to 1e7). */
#define SD_MAX_STIFFNESS (SD_MAX_MASS * SD_MAX_LENGTH * SD_MAX_LENGTH * 1e14)

/* A mimic multiplier (a gear ratio): a million, beyond any gear train. */
#define SD_MAX_GEAR_RATIO 1e6

#endif /* SOADYN_MODEL_BOUNDS_H */
