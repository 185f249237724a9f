/*
 * examples/arm_pd_control.c — soadyn from C: load the bundled KUKA iiwa 14, drive it to a target
 * posture with computed-torque control, tau = C(q, u) + M(q) (-kp e - kd u), whose closed loop is a
 * critically damped e'' + kd e' + kp e = 0 for every joint whatever the arm's inertia (plain PD gains
 * on the light wrist would make the system stiff for a fixed-step integrator), simulate 3 s with RK4,
 * and print how well it tracks.
 *
 *   build/examples/arm_pd_control [models/iiwa14.urdf]
 *
 * Exit status 0 when the final posture error is below 1e-3 rad, so the example also runs as a test.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <soadyn/soadyn.h>

/* The controller's state: the model, a workspace of its own, gains, target and scratch arrays. */
typedef struct pd_controller {
    const sd_model *model;
    sd_data *data;
    double kp, kd;
    double *q_target, *bias, *error, *M;
} pd_controller;

/* tau += C(q, u) + M(q) (-kp e - kd u), e = q (-) q_target (C includes the joints' damping,
 * soadyn/dynamics.h): called at every right-hand-side evaluation of the integrator. */
static void pd_control(void *user, double t, const double *q, const double *u, double *tau)
{
    (void)t;
    pd_controller *c = user;
    const int nv = sd_model_nv(c->model);
    sd_bias_forces(c->model, c->data, q, u, NULL, c->bias);
    sd_mass_matrix(c->model, c->data, q, c->M);
    sd_configuration_difference(c->model, c->q_target, q, c->error);
    for (int i = 0; i < nv; ++i) c->error[i] = -c->kp * c->error[i] - c->kd * u[i]; /* wanted qdd */
    for (int i = 0; i < nv; ++i) {
        double s = c->bias[i];
        for (int j = 0; j < nv; ++j) s += c->M[i * nv + j] * c->error[j];
        tau[i] += s;
    }
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "models/iiwa14.urdf";
    sd_model *model = NULL;
    sd_error err;
    if (sd_urdf_load_file(path, NULL, &model, &err) != SD_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 2;
    }
    const int nq = sd_model_nq(model), nv = sd_model_nv(model);
    double *q = malloc((size_t)nq * sizeof(double)), *u = calloc((size_t)nv, sizeof(double));
    pd_controller pd = {model, sd_data_new(model), 100.0, 20.0, malloc((size_t)nq * sizeof(double)),
                        malloc((size_t)nv * sizeof(double)), malloc((size_t)nv * sizeof(double)),
                        malloc((size_t)nv * nv * sizeof(double))};
    sd_configuration_neutral(model, q); /* start straight up, go to a bent posture */
    for (int i = 0; i < nq; ++i) pd.q_target[i] = 0.3 * (i % 2 ? -1.0 : 1.0);

    sd_sim_options opt;
    sd_sim_options_init(&opt);
    opt.integrator = SD_INTEGRATOR_RK4;
    opt.duration = 3.0;
    opt.dt = 1e-3;
    opt.control = pd_control;
    opt.control_user = &pd;
    sd_sim_stats stats;
    int status = 0;
    if (sd_simulate(model, &opt, q, u, &stats, &err) != SD_OK) {
        fprintf(stderr, "simulation failed: %s\n", err.message);
        status = 3;
    } else {
        double worst = 0.0;
        sd_configuration_difference(model, pd.q_target, q, pd.error);
        for (int i = 0; i < nv; ++i) worst = fmax(worst, fabs(pd.error[i]));
        printf("%s: %ld RK4 steps, largest joint error after %.1f s: %.3g rad\n", sd_model_name(model),
               stats.steps, stats.t_end, worst);
        status = worst < 1e-3 ? 0 : 1;
    }
    free(q); free(u); free(pd.q_target); free(pd.bias); free(pd.error); free(pd.M);
    sd_data_free(pd.data);
    sd_model_free(model);
    return status;
}
