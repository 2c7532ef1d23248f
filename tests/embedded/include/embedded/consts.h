#pragma once
#define SCALE 2.0f
#define OFFSET 0.5f
